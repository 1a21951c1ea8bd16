"""A grpc.aio server as a service Part: listens at start, drains in-flight calls at stop.

Roles register their servicers on `server` before the service starts (jobs: the container
event server). TLS comes from a certificate and key file pair.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import grpc

from lens.runtime import errors

log = logging.getLogger(__name__)

STOP_GRACE_SECONDS = 5.0


def server_credentials(cert_file: str, key_file: str) -> grpc.ServerCredentials | None:
    """TLS credentials from PEM files; None when neither is set; ConfigError when one is bad."""
    if not cert_file and not key_file:
        return None
    if not cert_file or not key_file:
        raise errors.ConfigError(
            source="config", key="jobs.tls_cert_file", expected="set with jobs.tls_key_file"
        )
    try:
        pair = (Path(key_file).read_bytes(), Path(cert_file).read_bytes())
    except OSError as exc:
        raise errors.ConfigError(
            source="config", key="jobs.tls_cert_file", expected=f"readable PEM files ({exc})"
        ) from exc
    return grpc.ssl_server_credentials([pair])


class GrpcServer:
    """One grpc.aio server; `register` adds servicers, `port` is the bound port once started."""

    def __init__(
        self,
        *,
        name: str,
        host: str,
        port: int,
        credentials: grpc.ServerCredentials | None = None,
    ) -> None:
        self.name = name
        self._address = f"{host}:{port}"
        self._credentials = credentials
        self._registrations: list[Callable[[grpc.aio.Server], None]] = []
        self._server: grpc.aio.Server | None = None
        self.port = port

    def register(self, add: Callable[[grpc.aio.Server], None]) -> None:
        self._registrations.append(add)

    async def start(self) -> None:
        server = grpc.aio.server(
            options=[
                ("grpc.keepalive_time_ms", 30_000),
                ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
                ("grpc.keepalive_permit_without_calls", 1),
            ]
        )
        for add in self._registrations:
            add(server)
        try:
            if self._credentials is None:
                self.port = server.add_insecure_port(self._address)
            else:
                self.port = server.add_secure_port(self._address, self._credentials)
        except RuntimeError as exc:
            raise errors.ConfigError(
                source="config",
                key=f"{self.name} address",
                expected=f"an address this host can listen on, not {self._address} ({exc})",
            ) from exc
        await server.start()
        self._server = server
        log.info("grpc server listening", extra={"address": self._address, "port": self.port})

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(STOP_GRACE_SECONDS)
            self._server = None
