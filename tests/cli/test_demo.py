"""`lens demo` as a person runs it: one command from nothing to a dashboard of a living
simulated cluster, marked simulated; Ctrl-C (or SIGTERM) stops it within the stop timeout and
its temporary files go with it, a busy medium demo too; a preset or speed it does not have is a
one-line usage error, a speed above what the preset sustains a warning."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lens.cli.app import app
from lens.roles.demo import main as demo_main

pytestmark = pytest.mark.slow_timeout
# How long a test waits for the process to end: a guard against a hang, not a measure. Whether
# it stopped within its stop timeout, by its own clock, its exit code says (0; otherwise
# EXIT_STOP_TIMEOUT, with "did not stop in time" logged): a loaded host's scheduling delays
# are no part of it.
HANG_GUARD_SECONDS = 120


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A temporary directory with a short path: the demo's Unix sockets live under it."""
    directory = Path(tempfile.mkdtemp(prefix="ld-", dir="/tmp"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def _wait(said: Callable[[], str], pattern: str, timeout: float = 60) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while (found := re.search(pattern, said())) is None:
        assert time.monotonic() < deadline, said()[-3000:]
        time.sleep(0.2)
    return found


def _data(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        data = json.loads(answer.read())["data"]
    assert isinstance(data, dict)
    return data


def test_lens_demo_serves_a_living_simulated_cluster_and_stops_on_ctrl_c(
    short_tmp: Path,
) -> None:
    log = short_tmp / "demo.log"
    # A kubeconfig of the user's own, which the demo must neither read nor name (issue 36).
    home = short_tmp / "home"
    (home / ".kube").mkdir(parents=True)
    (home / ".kube" / "config").write_text("not a kubeconfig\n")
    env = {
        **os.environ,
        "TMPDIR": str(short_tmp),
        "LENS_SERVER__PORT": "0",
        "HOME": str(home),
        "KUBECONFIG": str(home / "users-kubeconfig"),
    }
    with log.open("wb") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "lens", "demo", "--api-port", "0", "--speed", "60"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        said = lambda: log.read_text(errors="replace")  # noqa: E731
        url = _wait(said, r"Lens is up: (http://127\.0\.0\.1:\d+/)").group(1)
        assert "lens demo: simulated cluster 'small': 2 nodes, 16 GPUs" in said()
        files = Path(_wait(said, r"its database and files under (\S+)").group(1))
        assert files.parent == short_tmp and (files / "lens.db").exists()
        about = _data(url + "v1/about")
        # Real time until every node's agent runs, then up to the speed asked as the host allows.
        assert about["simulated"] is True and 1 <= float(str(about["clock_rate"])) <= 60
        deadline = time.monotonic() + 30
        while _data(url + "v1/clusters/overview")["allocatedGpus"] == 0:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        child.send_signal(signal.SIGINT)
        assert child.wait(HANG_GUARD_SECONDS) == 0, said()[-3000:]
        assert not files.exists()  # the demo's files went with it
        assert "kubeconfig" not in said() and str(home) not in said()
        # What it does use, the simulated API server, it names.
        assert re.search(r'"kube_url": "http://127\.0\.0\.1:\d+"', said()), said()[-3000:]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)


@pytest.mark.timeout(300)
def test_a_busy_medium_demo_stops_on_ctrl_c_within_the_stop_timeout_and_leaves_no_files(
    short_tmp: Path,
) -> None:
    """At the highest speed the medium preset sustains, every agent collecting: Ctrl-C ends
    the process within the stop timeout, its files removed (it took 74 s and left 8,595 files
    behind, #36). SIGTERM takes the same path (tests/runtime/test_lifecycle.py)."""
    speed = demo_main.SUSTAINED_SPEEDS["medium"]
    log = short_tmp / "demo.log"
    env = {**os.environ, "TMPDIR": str(short_tmp), "LENS_SERVER__PORT": "0"}
    command = [sys.executable, "-m", "lens", "demo", "--preset", "medium", "--api-port", "0"]
    with log.open("wb") as out:
        child = subprocess.Popen(
            [*command, "--speed", f"{speed:g}"], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        said = lambda: log.read_text(errors="replace")  # noqa: E731
        url = _wait(said, r"Lens is up: (http://127\.0\.0\.1:\d+/)", timeout=120).group(1)
        files = Path(_wait(said, r"its database and files under (\S+)").group(1))
        deadline = time.monotonic() + 240
        while not _every_gpu_read(url, 800):
            assert time.monotonic() < deadline and child.poll() is None, said()[-3000:]
            time.sleep(1)
        child.send_signal(signal.SIGINT)
        assert child.wait(HANG_GUARD_SECONDS) == 0, said()[-3000:]  # within its stop timeout
        assert not files.exists(), sorted(str(p) for p in files.rglob("*"))[:20]
        assert "did not stop in time" not in said()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)


def _every_gpu_read(url: str, gpus: int) -> bool:
    """Every GPU of the cluster has a minute reported: every agent runs and collects."""
    try:
        listed = _data(url + "v1/gpus?page_size=1000")["data"]
    except OSError:
        return False
    assert isinstance(listed, list)
    return len(listed) == gpus and all(gpu["as_of"] is not None for gpu in listed)


def test_a_preset_or_speed_it_does_not_have_is_a_usage_error() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["demo", "--preset", "large"])
    assert result.exit_code == 2
    assert "--preset: expected small or medium, got 'large'" in result.output
    result = runner.invoke(app, ["demo", "--speed", "600"])
    assert result.exit_code == 2 and "--speed" in result.output
