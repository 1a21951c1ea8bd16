"""A grpc.aio server as a service Part: listens at start, drains in-flight calls at stop.

Roles register their servicers on `server` before the service starts (jobs: the container
event server). TLS comes from a certificate and key file pair. An address it cannot listen on
is a ListenError (runtime/listening.py) naming the setting that moves it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import grpc

from lens.runtime import errors, listening

log = logging.getLogger(__name__)

STOP_GRACE_SECONDS = 5.0


def server_credentials(
    cert_file: str,
    key_file: str,
    *,
    cert_key: str = "jobs.tls_cert_file",
    key_key: str = "jobs.tls_key_file",
) -> grpc.ServerCredentials | None:
    """TLS credentials from PEM files; None when neither is set.

    A missing, unreadable or malformed file, or a key that is not the certificate's, is a
    ConfigError on its own key (`cert_key`, `key_key`): gRPC itself only fails to bind, which
    would blame the listen address.
    """
    if not cert_file and not key_file:
        return None
    if not cert_file or not key_file:
        unset, other = (cert_key, key_key) if not cert_file else (key_key, cert_key)
        raise errors.ConfigError(source="config", key=unset, expected=f"set with {other}")
    cert_pem = _read_pem(cert_file, key=cert_key)
    key_pem = _read_pem(key_file, key=key_key)
    _check_pair((cert_pem, cert_file, cert_key), (key_pem, key_file, key_key))
    return grpc.ssl_server_credentials([(key_pem, cert_pem)])


def _read_pem(path: str, *, key: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise errors.ConfigError(
            source="config", key=key, expected=f"a readable PEM file ({exc.strerror}: {path})"
        ) from exc


def _check_pair(cert: tuple[bytes, str, str], key: tuple[bytes, str, str]) -> None:
    """The certificate and key (each its PEM, file and config key) parse, and the key is the
    certificate's: what gRPC needs."""
    from cryptography import x509
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization

    (cert_pem, cert_file, cert_key), (key_pem, key_file, key_key) = cert, key
    try:
        leaf = x509.load_pem_x509_certificates(cert_pem)[0]
    except ValueError as exc:
        raise errors.ConfigError(
            source="config",
            key=cert_key,
            expected=f"a PEM certificate ({cert_file} holds none that can be read)",
        ) from exc
    try:
        private = serialization.load_pem_private_key(key_pem, password=None)
    except TypeError as exc:  # encrypted: the server has no way to ask for its password
        raise errors.ConfigError(
            source="config",
            key=key_key,
            expected=f"an unencrypted PEM private key ({key_file} needs a password)",
        ) from exc
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise errors.ConfigError(
            source="config",
            key=key_key,
            expected=f"a PEM private key ({key_file} holds none that can be read)",
        ) from exc
    spki = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    if leaf.public_key().public_bytes(*spki) != private.public_key().public_bytes(*spki):
        raise errors.ConfigError(
            source="config",
            key=key_key,
            expected=f"the private key of the certificate in {cert_key} ({key_file} is not)",
        )


class GrpcServer:
    """One grpc.aio server; `register` adds servicers, `port` is the bound port once started."""

    def __init__(
        self,
        *,
        name: str,
        host: str,
        port: int,
        endpoint: listening.Endpoint,
        credentials: grpc.ServerCredentials | None = None,
    ) -> None:
        """`endpoint`: what the server is for and the settings of its address."""
        self.name = name
        self._host = host
        self._endpoint = endpoint
        self._address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self._credentials = credentials
        self._registrations: list[Callable[[grpc.aio.Server], None]] = []
        self._server: grpc.aio.Server | None = None
        self.port = port

    def register(self, add: Callable[[grpc.aio.Server], None]) -> None:
        self._registrations.append(add)

    async def start(self) -> None:
        # gRPC says only "Failed to bind" (and writes its own line on stderr): binding the
        # address ourselves first finds why it cannot be.
        refused = listening.bind_error(self._host, self.port, endpoint=self._endpoint)
        if refused is not None:
            raise refused
        server = grpc.aio.server(
            options=[
                ("grpc.keepalive_time_ms", 30_000),
                ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
                ("grpc.keepalive_permit_without_calls", 1),
                # gRPC's default, SO_REUSEPORT, lets a second server share a port in use and
                # take half its connections, where it should fail to start.
                ("grpc.so_reuseport", 0),
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
            # Taken since it was tried (found again, if so) or, rarely, a certificate and key
            # gRPC cannot use although they parse and match (server_credentials checked them).
            refused = listening.bind_error(self._host, self.port, endpoint=self._endpoint)
            if refused is not None:
                raise refused from exc
            tls = " with the TLS certificate and key given" if self._credentials else ""
            raise errors.ConfigError(
                source="config",
                key=f"{self.name} address",
                expected=f"an address this host can listen on{tls}, not {self._address} ({exc})",
            ) from exc
        await server.start()
        self._server = server
        log.info("grpc server listening", extra={"address": self._address, "port": self.port})

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(STOP_GRACE_SECONDS)
            self._server = None
