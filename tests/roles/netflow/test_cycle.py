"""The role's interval, in-process: where eBPF cannot run, `auto` falls back to sock_diag and
`ebpf` says why (/readyz, the backend metric) and reads nothing; a connection lands in the
metrics through either backend."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from pathlib import Path

import pytest

from lens.netflow import classify, listeners, loader, socklayout
from lens.netflow.netflowmetrics import NetflowMetrics
from lens.roles.netflow.cycle import NetflowCycle
from lens.runtime import errors
from lens.runtime.clock import SystemClock
from lens.runtime.config import NetflowConfig
from lens.runtime.selfmetrics import SelfMetrics
from tests.netflow import loopback
from tests.netflow.conftest import Link

pytestmark = pytest.mark.slow_timeout


def _cycle(metrics: SelfMetrics, backend: str = "auto") -> NetflowCycle:
    return NetflowCycle(
        NetflowConfig(backend=backend),
        root=Path("/"),
        classifier=classify.Classifier(classify.DEFAULT_POLICY),
        metrics=NetflowMetrics(metrics, ttl_seconds=600),
        clock=SystemClock(),
    )


def test_without_ebpf_it_says_why_and_reads_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(loader, "TRACEFS", (tmp_path,))
    monkeypatch.setattr(socklayout, "VMLINUX", tmp_path / "no-btf")
    metrics = SelfMetrics(process=False)
    cycle = _cycle(metrics, backend="ebpf")
    with pytest.raises(RuntimeError, match="loading"):
        cycle.ready()
    asyncio.run(cycle.start())
    with pytest.raises(RuntimeError, match="tracepoints missing"):
        cycle.ready()
    assert (
        metrics.registry.get_sample_value(
            "lens_netflow_backend", {"backend": "none", "attachment": ""}
        )
        == 1
    )
    cycle.run()  # nothing to read: no error
    asyncio.run(cycle.stop())


def test_a_connection_lands_in_the_metrics(link: Link) -> None:
    metrics = SelfMetrics(process=False)
    cycle = _cycle(metrics)
    asyncio.run(cycle.start())
    try:
        cycle.ready()
        cycle.run()
        link.transfer(to=link.server_ip, port=7700, send=100_000, reply=0)
        labels = {"direction": "outbound", "peer": link.server_ip, "port": "7700"}
        sent = 0.0
        for _ in range(50):
            cycle.run()
            sent = (
                metrics.registry.get_sample_value(
                    "lens_netflow_tcp_sent_bytes_total", {**labels, "peer_type": "internalHosts"}
                )
                or 0.0
            )
            if sent == 100_000:
                break
            asyncio.run(asyncio.sleep(0.05))
        assert sent == 100_000
        raw = {"backend": "ebpf", "attachment": "raw_tracepoint"}  # this kernel has BTF
        assert metrics.registry.get_sample_value("lens_netflow_backend", raw) == 1
    finally:
        asyncio.run(cycle.stop())


def test_auto_falls_back_to_sock_diag_and_counts_a_local_connection(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(loader, "TRACEFS", (tmp_path,))
    monkeypatch.setattr(socklayout, "VMLINUX", tmp_path / "no-btf")
    metrics = SelfMetrics(process=False)
    cycle = _cycle(metrics)
    asyncio.run(cycle.start())
    try:
        cycle.ready()
        assert (
            metrics.registry.get_sample_value(
                "lens_netflow_backend", {"backend": "sockdiag", "attachment": ""}
            )
            == 1
        )
        cycle.run()
        with loopback.connection() as connection:
            connection.carry(50_000)
            time.sleep(0.05)
            cycle.run()
        labels = {
            "direction": "outbound",
            "peer": "127.0.0.1",
            "peer_type": "localhost",
            "port": str(connection.port),
        }
        assert (
            metrics.registry.get_sample_value("lens_netflow_tcp_sent_bytes_total", labels) == 50_000
        )
    finally:
        asyncio.run(cycle.stop())


def test_listeners_read_from_the_proc_files_are_logged_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Where sock_diag is refused the listeners come from /proc/net/tcp, each interval a walk of
    every socket: said once when it starts and once when it ends, not every interval."""
    refused = [True]

    def read_diag() -> listeners.Listeners:
        if refused[0]:
            raise errors.SourceError("sock_diag: no netlink socket (Permission denied)")
        return listeners.Listeners(endpoints=frozenset())

    monkeypatch.setattr(listeners, "read_diag_listeners", read_diag)
    cycle = _cycle(SelfMetrics(process=False), backend="sockdiag")
    asyncio.run(cycle.start())
    try:
        with caplog.at_level(logging.INFO, logger="lens.roles.netflow.cycle"):
            for _ in range(3):
                cycle.run()
            refused[0] = False
            for _ in range(2):
                cycle.run()
    finally:
        asyncio.run(cycle.stop())
    said = [(r.levelname, r.getMessage()) for r in caplog.records if "listening" in r.getMessage()]
    assert said == [
        ("WARNING", "listening sockets read from the proc files"),
        ("INFO", "listening sockets read through sock_diag again"),
    ]


def test_the_listeners_are_read_once_an_interval_for_both_the_backend_and_the_cycle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sock_diag backend tells who opened a connection from the listeners, as the cycle
    does: the cycle's reading of the interval serves both."""
    readings: list[listeners.Listeners] = []
    read = listeners.read_listeners

    def counted(root: Path) -> listeners.Listeners:
        readings.append(read(root))
        return readings[-1]

    monkeypatch.setattr(listeners, "read_listeners", counted)
    cycle = _cycle(SelfMetrics(process=False), backend="sockdiag")
    asyncio.run(cycle.start())
    try:
        with socket.create_server(("127.0.0.1", 0)) as server:  # a socket for the backend
            for _ in range(3):
                cycle.run()
            assert server.getsockname()[1] in {e.port for e in readings[-1].endpoints}
    finally:
        asyncio.run(cycle.stop())
    assert len(readings) == 3
