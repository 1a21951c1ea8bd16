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


def test_a_host_root_flag_replaces_host_root(tmp_path: Path) -> None:
    from lens.runtime import config

    cfg = common.with_host_root(config.Config(), str(tmp_path))
    assert cfg.host.root == str(tmp_path)
    assert common.with_host_root(cfg, None) == cfg


@pytest.mark.parametrize(("flag", "where"), [(True, "--host-root"), (False, "host.root")])
def test_a_host_root_that_is_no_directory_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: bool, where: str
) -> None:
    import dataclasses

    import typer

    from lens.runtime import config

    afile = tmp_path / "file"
    afile.write_text("")
    cfg = config.Config()
    if not flag:
        cfg = dataclasses.replace(cfg, host=config.HostConfig(root=str(afile)))
    with pytest.raises(typer.Exit) as exited:
        common.with_host_root(cfg, str(afile) if flag else None)
    assert exited.value.exit_code == errors.EXIT_CONFIG
    assert capsys.readouterr().err == (
        f"lens: config error: {where}: expected a directory, got '{afile}'\n"
    )


def test_a_host_root_too_long_for_the_system_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Path.is_dir() raised OSError (File name too long): a traceback.
    import typer

    from lens.runtime import config

    with pytest.raises(typer.Exit):
        common.with_host_root(config.Config(), str(tmp_path / ("a" * 300)))
    err = capsys.readouterr().err
    assert err.startswith("lens: config error: --host-root: expected a directory (File name too")
    assert len(err.splitlines()) == 1


def test_a_value_with_a_newline_stays_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    import typer

    with pytest.raises(typer.Exit):
        common.fail("usage error", "MI300X does not support compute partition \n\x1b", 2)
    assert capsys.readouterr().err == (
        "lens: usage error: MI300X does not support compute partition \\n\\x1b\n"
    )
