from __future__ import annotations

import socket
from pathlib import Path

import pytest

from lens.cli import common
from lens.runtime import errors

from .conftest import run_lens


def test_a_part_that_fails_is_named_on_the_last_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {
            "LENS_SERVICE__DATA_DIR": str(tmp_path),
            "LENS_SERVER__HOST": "127.0.0.1",
            "LENS_JOBS__GRPC_HOST": "127.0.0.1",
        }
        result = run_lens("jobs", "--port", "0", "--grpc-port", str(port), env=env)
    assert result.returncode == errors.EXIT_FATAL
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("lens: part failed: jobs: event-server: "), result.stderr


def test_a_failure_is_one_line_and_an_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    import typer

    with pytest.raises(typer.Exit) as exited:
        common.fail("config error", "server.port: expected an integer", errors.EXIT_CONFIG)
    assert exited.value.exit_code == errors.EXIT_CONFIG
    assert capsys.readouterr().err == "lens: config error: server.port: expected an integer\n"
