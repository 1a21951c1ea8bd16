"""Starting a daemon waits until it is ready; one that dies is reported with its log."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lens.sim import daemons


class Failed(RuntimeError):
    pass


def test_a_daemon_is_started_when_ready_and_stopped(tmp_path: Path) -> None:
    marker = tmp_path / "up"
    script = (
        "import pathlib, time; print('starting', flush=True); "
        f"pathlib.Path({str(marker)!r}).touch(); time.sleep(60)"
    )
    command = [sys.executable, "-c", script]
    process = daemons.start(
        command, log=tmp_path / "log", ready=marker.exists, timeout=20, failure=Failed
    )
    assert process.poll() is None
    daemons.stop(process, timeout=5)
    assert process.returncode is not None
    assert "starting" in (tmp_path / "log").read_text()


def test_a_daemon_that_exits_is_a_failure_naming_its_log(tmp_path: Path) -> None:
    with pytest.raises(Failed, match=r"did not start: see .*log"):
        daemons.start(
            [sys.executable, "-c", "raise SystemExit(3)"],
            log=tmp_path / "log",
            ready=lambda: False,
            timeout=20,
            failure=Failed,
        )
