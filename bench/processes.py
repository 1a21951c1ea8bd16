"""Helpers for benchmarks that run a Lens role (or a baseline) as a child process."""

from __future__ import annotations

import http.client
import os
import resource
import socket
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def wait_ready(port: int, deadline: float, *, what: str = "the role") -> None:
    """Until GET /readyz on 127.0.0.1:`port` answers 200; RuntimeError past `deadline`."""
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/readyz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not become ready")


def wait_listening(port: int, deadline: float, *, what: str) -> None:
    """Until something accepts TCP connections on 127.0.0.1:`port`."""
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not start listening on port {port}")


def cpu_seconds_of(name: str) -> float:
    """CPU seconds used so far by every running process whose command name is `name`."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() == name:
                total += cpu_seconds(int(entry.name))
        except OSError:
            continue  # it ended meanwhile
    return total


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
