"""`lens tune` as the DaemonSet runs it, in a process of its own on a temporary host root: ready
once the node is in sync, a deleted drop-in back within 5 s through inotify (the periodic check
a minute away), a live value put back within 5 s by the default 2 s check, its metrics served,
SIGTERM a clean stop."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from tests.opsport import get

pytestmark = pytest.mark.slow_timeout

REPAIR_SECONDS = 5.0


def _within(seconds: float, predicate: Callable[[], bool]) -> float:
    """How long `predicate` took to hold; fails past `seconds`."""
    start = time.monotonic()
    while not predicate():
        assert time.monotonic() - start < seconds, "not within the time"
        time.sleep(0.05)
    return time.monotonic() - start


@pytest.fixture
def daemon(
    host: Path, tmp_path: Path, free_port: Callable[[], int], request: pytest.FixtureRequest
) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    port = free_port()
    settings = {
        "server": {"host": "127.0.0.1", "port": port},
        "service": {
            "readiness_interval_seconds": 0.5,
            "metrics_interval_seconds": 0.5,
            "stop_timeout_seconds": 5,
        },
        "logging": {"format": "json"},
        "tune": {"interval_seconds": request.param},
    }
    config = tmp_path / "lens.yaml"
    config.write_text(yaml.safe_dump(settings))
    args = [sys.executable, "-m", "lens", "tune", "--config", str(config), "--host-root", str(host)]
    process = subprocess.Popen(args, stderr=subprocess.PIPE)
    try:
        _within(30, lambda: get(port, "/readyz")[0] == 200)
        yield process, port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        finally:
            process.kill()
            if process.stderr is not None:
                process.stderr.close()


@pytest.mark.parametrize("daemon", [60.0], indirect=True)
def test_a_deleted_drop_in_is_back_through_inotify(
    host: Path, daemon: tuple[subprocess.Popen[bytes], int]
) -> None:
    process, port = daemon
    own = host / "etc/sysctl.d/99-lens.conf"
    assert own.read_text().endswith("vm.max_map_count = 262144\n")
    own.unlink()
    _within(REPAIR_SECONDS, own.is_file)
    # Two drop-ins written at start, one repaired; nothing drifting.
    expected = ('lens_tune_writes_total{kind="file"} 3.0', "lens_tune_drifted_parameters 0.0")
    _within(5, lambda: all(line in get(port, "/metrics")[1] for line in expected))
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == 0
    assert process.stderr is not None
    logged = process.stderr.read().decode()
    assert logged.count("node tuning repaired") == 2 and "Traceback" not in logged


@pytest.mark.parametrize("daemon", [2.0], indirect=True)
def test_a_live_value_is_put_back_by_the_periodic_check(
    host: Path, daemon: tuple[subprocess.Popen[bytes], int]
) -> None:
    live = host / "proc/sys/vm/max_map_count"
    assert live.read_text() == "262144\n"
    live.write_text("65530\n")
    _within(REPAIR_SECONDS, lambda: live.read_text() == "262144\n")
