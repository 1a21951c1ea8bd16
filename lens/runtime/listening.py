"""Listening sockets: binding one, and the ListenError that names the setting moving it.

runtime/httpserver.py (server.port), runtime/grpcserver.py (the jobs' event server) and
roles/api/serving.py (api.port) bind through here; a bind that fails becomes an
errors.ListenError, which lens/cli/common.py prints as one line.
"""

from __future__ import annotations

import dataclasses
import errno
import socket

from lens.runtime import errors
from lens.runtime.config import env_name

_BACKLOG = 2048  # uvicorn's own default


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """What a server listens for, and the settings (dotted keys) of its address and port."""

    purpose: str
    host_key: str
    port_key: str


OPS = Endpoint(
    purpose="the HTTP server (/metrics, health checks)",
    host_key="server.host",
    port_key="server.port",
)


def refused(exc: OSError, *, host: str, port: int, endpoint: Endpoint) -> errors.ListenError:
    """The ListenError of binding host:port for `endpoint`, which failed with `exc`."""
    key = endpoint.port_key
    if isinstance(exc, socket.gaierror):
        reason, key = f"the host name does not resolve ({exc.strerror})", endpoint.host_key
    elif exc.errno == errno.EADDRINUSE:
        reason = "the port is in use"
    elif exc.errno == errno.EADDRNOTAVAIL:
        reason, key = "the address is not one of this host's", endpoint.host_key
    elif exc.errno == errno.EACCES and 0 < port < 1024:
        reason = "permission denied (a port below 1024 needs root or CAP_NET_BIND_SERVICE)"
    else:
        reason = (exc.strerror or str(exc)).lower()
    return errors.ListenError(
        host=host,
        port=port,
        purpose=endpoint.purpose,
        reason=reason,
        key=key,
        env=env_name(key),
    )


def bind(host: str, port: int, *, endpoint: Endpoint) -> socket.socket:
    """A TCP socket listening on host:port (IPv4 or IPv6, as `host` is), or a ListenError."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise refused(exc, host=host, port=port, endpoint=endpoint) from exc
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(_BACKLOG)
    except OSError as exc:
        sock.close()
        raise refused(exc, host=host, port=port, endpoint=endpoint) from exc
    return sock


def bind_error(host: str, port: int, *, endpoint: Endpoint) -> errors.ListenError | None:
    """Why host:port cannot be bound, found by binding it and letting it go at once (None: it
    can be): for a server that reports no cause, as gRPC's "Failed to bind"."""
    try:
        bind(host, port, endpoint=endpoint).close()
    except errors.ListenError as exc:
        return exc
    return None
