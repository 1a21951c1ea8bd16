from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from lens.cli import common
from lens.runtime import errors


class _Broken:
    name = "broken-part"

    async def start(self) -> None:
        raise RuntimeError("cannot start")

    async def stop(self) -> None:
        raise AssertionError("a part that did not start is not stopped")


@pytest.fixture
def root_logger() -> Iterator[None]:
    """The root logger put back after `launch` configured it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def test_a_part_that_fails_is_named_on_the_last_line(
    capsys: pytest.CaptureFixture[str], root_logger: None
) -> None:
    import typer

    from lens.runtime import config, launcher

    role = launcher.Role(
        name="jobs",
        starting="jobs starting",
        sections=(),
        build=lambda _cfg, process: process.add_part(_Broken()),
    )
    cfg = config.Config(server=config.ServerConfig(host="127.0.0.1", port=0))
    with pytest.raises(typer.Exit) as exited:
        common.launch(cfg, role)
    assert exited.value.exit_code == errors.EXIT_FATAL
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == "lens: part failed: jobs: broken-part: RuntimeError: cannot start"


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
