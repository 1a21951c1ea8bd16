"""The `api` config section: where `lens api` serves /v1 and who may read it.

roles/api/main.py reads it; the process's ops port (/healthz, /readyz, /metrics) stays in
`server`.
"""

from __future__ import annotations

import dataclasses
import ipaddress

from lens.runtime.settings import setting


def is_loopback(host: str) -> bool:
    """Whether listening on `host` reaches only this machine ("localhost", 127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ApiConfig:
    """The REST API of `lens api`: its own port, beside the process's ops port."""

    host: str = setting(
        "127.0.0.1",
        "Address the REST API listens on; any address but loopback needs token_file or "
        "token_review.",
    )
    port: int = setting(
        8080, "Port of the REST API (0 picks a free port).", minimum=0, maximum=65535
    )
    token_file: str = setting(
        "",
        "File of the SHA-256 digests (hex, one per line, # comments) of the bearer tokens "
        "accepted, re-read when it changes; empty: no token asked, allowed only on loopback.",
        path=True,
    )
    token_review: bool = setting(
        False,
        "Also accept a token the Kubernetes API server vouches for (TokenReview): a "
        "ServiceAccount's, or a user's own kubectl token.",
    )
    token_review_audiences: tuple[str, ...] = setting(
        (), "Audiences a reviewed token must be for; empty: the API server's own."
    )
    token_review_cache_seconds: float = setting(
        60.0,
        "How long a token's review is trusted before the API server is asked again.",
        minimum=1.0,
        maximum=3600.0,
    )
    allowed_groups: tuple[str, ...] = setting(
        (),
        "Groups a reviewed user must be in (one of them) to read the API, else 403; empty: "
        "any user the API server vouches for.",
    )
    cors_origins: tuple[str, ...] = setting(
        ("*",),
        "Origins whose web pages may call the API from a browser (CORS; the original allowed "
        "any, *); empty: none. Tokens are sent as headers, never cookies.",
    )
    max_page_size: int = setting(
        1000, "Largest page_size a list request may ask for.", minimum=1, maximum=100_000
    )
    graceful_shutdown_seconds: float = setting(
        5.0,
        "On stop, how long requests in flight may take to finish before they are cut.",
        minimum=0.0,
        maximum=600.0,
    )
