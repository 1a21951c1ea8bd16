from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from lens.runtime import errors, grpcserver


def test_tls_files_come_in_pairs_and_must_be_readable(tmp_path: Path) -> None:
    assert grpcserver.server_credentials("", "") is None
    with pytest.raises(errors.ConfigError, match="tls_key_file"):
        grpcserver.server_credentials("cert.pem", "")
    with pytest.raises(errors.ConfigError, match="readable PEM"):
        grpcserver.server_credentials(str(tmp_path / "c.pem"), str(tmp_path / "k.pem"))


def test_the_server_binds_a_free_port_and_stops() -> None:
    server = grpcserver.GrpcServer(name="test", host="127.0.0.1", port=0)
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
