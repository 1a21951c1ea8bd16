"""A client for this node's kubelet: GET /pods and /stats/summary over verified HTTPS.

Every call has a timeout; the bearer token is re-read when its file changes (projected service
account tokens rotate hourly) and once more after a 401. HTTP and TLS errors become Lens errors
here (STYLE S12.2): 401/403 -> Forbidden, anything else -> SourceError, and so does a body that
is no JSON (`parse_body`). allocation.py and ephemeral.py parse what this returns.
"""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request

from lens.runtime import errors, jsontext, tokenfile
from lens.runtime.config import KubeletConfig


def _tls(config: KubeletConfig) -> ssl.SSLContext:
    if config.insecure_skip_tls_verify:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    try:
        return ssl.create_default_context(cafile=config.ca_file or None)
    except (OSError, ssl.SSLError) as exc:
        raise errors.ConfigError(
            source="kubelet.ca_file",
            key="kubelet.ca_file",
            expected=f"a readable CA bundle ({exc})",
        ) from exc


class KubeletClient:
    """GETs JSON from one kubelet; safe to share between threads."""

    def __init__(self, config: KubeletConfig) -> None:
        if not config.url:
            raise errors.NoDataError("no kubelet URL configured (kubelet.url)")
        self._base = config.url.rstrip("/")
        self._timeout = config.timeout_seconds
        self._token = tokenfile.TokenFile(config.token_file)
        self._context = _tls(config) if self._base.startswith("https:") else None

    def get_json(self, path: str) -> object:
        """The decoded JSON body of GET `path`; raises Forbidden or SourceError."""
        try:
            return self._get(path, self._token.read())
        except errors.Forbidden:
            refreshed = self._token.read(force=True)
            return self._get(path, refreshed)  # the token may have rotated since it was read

    def _get(self, path: str, token: str) -> object:
        request = urllib.request.Request(self._base + path, headers={"Accept": "application/json"})
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout, context=self._context) as r:
                body = r.read()
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):
                raise errors.Forbidden(f"kubelet {path}: HTTP {exc.code} {exc.reason}") from exc
            raise errors.SourceError(f"kubelet {path}: HTTP {exc.code} {exc.reason}") from exc
        except urllib.error.URLError as exc:
            raise errors.SourceError(f"kubelet {path}: {exc.reason}") from exc
        except (TimeoutError, OSError) as exc:
            raise errors.SourceError(f"kubelet {path}: {exc}") from exc
        return parse_body(body, path)


def parse_body(body: bytes, path: str) -> object:
    """A kubelet answer's JSON; SourceError when it is not UTF-8, not JSON, nested too deeply
    or holds a number too long to read (any of these from json.loads would be no Lens error)."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise errors.SourceError(f"kubelet {path}: the answer is not UTF-8") from exc
    try:
        return jsontext.loads(text)
    except jsontext.JsonError as exc:
        raise errors.SourceError(f"kubelet {path}: {exc}") from exc
