from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import grpc
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from lens.runtime import errors, grpcserver, listening
from lens.sim.kubelet import certs


def test_tls_files_come_in_pairs_and_must_be_readable(tmp_path: Path) -> None:
    assert grpcserver.server_credentials("", "") is None
    with pytest.raises(errors.ConfigError, match=r"jobs\.tls_key_file: set with jobs\.tls_cert"):
        grpcserver.server_credentials("cert.pem", "")
    with pytest.raises(errors.ConfigError, match=r"jobs\.tls_cert_file: set with jobs\.tls_key"):
        grpcserver.server_credentials("", "key.pem")
    with pytest.raises(errors.ConfigError, match="tls_cert_file: a readable PEM"):
        grpcserver.server_credentials(str(tmp_path / "c.pem"), str(tmp_path / "k.pem"))


EVENTS = listening.Endpoint(purpose="events", host_key="jobs.grpc_host", port_key="jobs.grpc_port")


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> tuple[certs.ServingCert, certs.ServingCert]:
    root = tmp_path_factory.mktemp("tls")
    return certs.issue(root / "a"), certs.issue(root / "b")


def _encrypted_key(path: Path) -> Path:
    key = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"pw"),
        )
    )
    return path


def test_a_matching_certificate_and_key_give_credentials(
    pairs: tuple[certs.ServingCert, certs.ServingCert],
) -> None:
    good, _ = pairs
    credentials = grpcserver.server_credentials(str(good.cert_file), str(good.key_file))
    assert isinstance(credentials, grpc.ServerCredentials)


@pytest.mark.parametrize(
    ("which", "key", "expected"),
    [
        ("bad cert", "tls_cert_file", "a PEM certificate (NOTPEM holds none that can be read)"),
        ("bad key", "tls_key_file", "a PEM private key (NOTPEM holds none that can be read)"),
        ("key only", "tls_cert_file", "a PEM certificate"),
        ("other key", "tls_key_file", "the private key of the certificate in jobs.tls_cert_file"),
        ("encrypted", "tls_key_file", "an unencrypted PEM private key"),
        ("missing key", "tls_key_file", "a readable PEM file (No such file or directory"),
    ],
)
def test_an_unusable_certificate_or_key_names_its_own_setting(
    tmp_path: Path,
    pairs: tuple[certs.ServingCert, certs.ServingCert],
    which: str,
    key: str,
    expected: str,
) -> None:
    # gRPC only failed to bind, so a bad PEM or a key of another certificate was blamed on the
    # event server's listen address (issue 16, #12).
    good, other = pairs
    notpem = tmp_path / "notpem"
    notpem.write_text("not a PEM file\n")
    cert, private = {
        "bad cert": (notpem, good.key_file),
        "bad key": (good.cert_file, notpem),
        "key only": (good.key_file, good.key_file),
        "other key": (good.cert_file, other.key_file),
        "encrypted": (good.cert_file, _encrypted_key(tmp_path / "enc.pem")),
        "missing key": (good.cert_file, tmp_path / "absent.pem"),
    }[which]
    with pytest.raises(errors.ConfigError) as caught:
        grpcserver.server_credentials(str(cert), str(private))
    assert caught.value.key == f"jobs.{key}"
    assert caught.value.expected.startswith(expected.replace("NOTPEM", str(notpem)))


def test_the_server_binds_a_free_port_and_stops() -> None:
    server = grpcserver.GrpcServer(name="test", host="127.0.0.1", port=0, endpoint=EVENTS)
    registered: list[object] = []
    server.register(registered.append)

    async def cycle() -> int:
        await server.start()
        port = server.port
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            await asyncio.wait_for(channel.channel_ready(), 5)
        await server.stop()
        return port

    assert asyncio.run(cycle()) > 0
    assert len(registered) == 1


@pytest.mark.parametrize("tls", [False, True])
def test_a_port_in_use_is_a_listen_error_naming_its_setting(
    pairs: tuple[certs.ServingCert, certs.ServingCert], tls: bool
) -> None:
    # It was a ConfigError on "event-server address" saying only gRPC's "Failed to bind".
    good, _ = pairs
    credentials = (
        grpcserver.server_credentials(str(good.cert_file), str(good.key_file)) if tls else None
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = grpcserver.GrpcServer(
            name="test", host="127.0.0.1", port=port, endpoint=EVENTS, credentials=credentials
        )
        with pytest.raises(errors.ListenError) as caught:
            asyncio.run(server.start())
    assert (caught.value.address, caught.value.reason) == (
        f"127.0.0.1:{port}",
        "the port is in use",
    )
    assert (caught.value.key, caught.value.env) == ("jobs.grpc_port", "LENS_JOBS__GRPC_PORT")


def test_a_second_server_does_not_share_the_port_of_the_first() -> None:
    # gRPC's SO_REUSEPORT let a second `lens jobs` start on the same port and take half of
    # the agents' streams.
    first = grpcserver.GrpcServer(name="first", host="127.0.0.1", port=0, endpoint=EVENTS)

    async def both() -> None:
        await first.start()
        try:
            second = grpcserver.GrpcServer(
                name="second", host="127.0.0.1", port=first.port, endpoint=EVENTS
            )
            await second.start()
        finally:
            await first.stop()

    with pytest.raises(errors.ListenError, match="the port is in use"):
        asyncio.run(both())
