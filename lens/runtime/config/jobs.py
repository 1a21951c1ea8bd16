"""The `jobs` config section: the container event server of `lens jobs`."""

from __future__ import annotations

import dataclasses

from lens.runtime.settings import setting


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class JobsConfig:
    """The jobs role: its gRPC event server."""

    grpc_host: str = setting("0.0.0.0", "Address the event server listens on.")
    grpc_port: int = setting(8991, "Port of the event server.", minimum=0, maximum=65535)
    tls_cert_file: str = setting(
        "", "Server certificate (PEM); with tls_key_file turns TLS on.", path=True
    )
    tls_key_file: str = setting("", "Private key of tls_cert_file (PEM).", path=True)
    token_file: str = setting(
        "",
        "File holding the bearer token agents must send; empty: no token required.",
        path=True,
    )
    batch_records: int = setting(
        5000,
        "Most events written in one transaction (batches waiting together are merged).",
        minimum=1,
        maximum=100_000,
    )
