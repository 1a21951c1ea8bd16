"""Starting and stopping the real daemons test harnesses run (containerd, dockerd)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path


def start(
    command: Sequence[str],
    *,
    log: Path,
    ready: Callable[[], bool],
    timeout: float,
    failure: Callable[[str], Exception],
) -> subprocess.Popen[bytes]:
    """Start `command` with its output in `log`, and wait until `ready()`; `failure(message)`
    is raised when it exits or is not ready within `timeout` seconds."""
    with log.open("wb") as out:
        process = subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline or process.poll() is not None:
            stop(process, timeout=10)
            raise failure(f"{command[0]} did not start: see {log}")
        time.sleep(0.1)
    return process


def stop(process: subprocess.Popen[bytes], *, timeout: float) -> None:
    """SIGTERM, then SIGKILL after `timeout` seconds."""
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
