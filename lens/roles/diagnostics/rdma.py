"""`lens rdma`: RDMA devices and ports of this node (sysfs, else the rdma tool) as a table or JSON.

While watching, throughput is worked out from the byte counters between two reads.
"""

from __future__ import annotations

import dataclasses
import time

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from lens.devices.ib import RdmaSnapshot
from lens.devices.sources import NodeSources, node_sources
from lens.roles.diagnostics import showing
from lens.runtime import errors
from lens.runtime.config import HostConfig


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RdmaReport:
    snapshot: RdmaSnapshot | None
    read_at: float
    problems: tuple[str, ...]
    # (device, port) -> (transmit, receive) bytes per second since the previous read
    throughput: dict[tuple[str, int], tuple[float | None, float | None]]


class RdmaReader:
    def __init__(self, sources: NodeSources) -> None:
        self._collector = sources.rdma_collector()
        self._previous: RdmaReport | None = None

    def read(self) -> RdmaReport:
        now = time.monotonic()
        try:
            snapshot: RdmaSnapshot | None = self._collector.collect()
            problems: tuple[str, ...] = snapshot.problems if snapshot else ()
        except errors.LensError as exc:
            snapshot, problems = None, (str(exc),)
        report = RdmaReport(
            snapshot=snapshot,
            read_at=now,
            problems=problems,
            throughput=self._throughput(snapshot, now),
        )
        self._previous = report
        return report

    def _throughput(
        self, snapshot: RdmaSnapshot | None, now: float
    ) -> dict[tuple[str, int], tuple[float | None, float | None]]:
        before = self._previous
        if snapshot is None or before is None or before.snapshot is None:
            return {}
        elapsed = now - before.read_at
        earlier = {(p.device, p.port): p for p in before.snapshot.ports}
        rates: dict[tuple[str, int], tuple[float | None, float | None]] = {}
        for port in snapshot.ports:
            old = earlier.get((port.device, port.port))
            if old is None or elapsed <= 0:
                continue
            rates[(port.device, port.port)] = (
                _rate(old.transmit_bytes, port.transmit_bytes, elapsed),
                _rate(old.receive_bytes, port.receive_bytes, elapsed),
            )
        return rates


def _rate(before: int | None, after: int | None, elapsed: float) -> float | None:
    if before is None or after is None or after < before:
        return None
    return (after - before) / elapsed


def _gigabytes(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value / 1e9:.{digits}f}"


def table(report: RdmaReport) -> Group:
    snapshot = report.snapshot
    source = snapshot.source if snapshot else "nothing"
    grid = Table(
        box=box.SIMPLE_HEAD,
        title=f"{len(snapshot.devices) if snapshot else 0} RDMA devices",
        caption=f"read from {source}",
        caption_justify="left",
    )
    names = ("Device", "Port", "State", "Physical", "Link", "Rate Gb/s", "Netdev", "uverbs")
    for name in (*names, "TX GB", "RX GB", "TX GB/s", "RX GB/s", "FW", "PCI", "NUMA"):
        grid.add_column(name, justify="right" if "GB" in name or name == "NUMA" else "left")
    for device in snapshot.devices if snapshot else ():
        for port in device.ports:
            tx, rx = report.throughput.get((port.device, port.port), (None, None))
            rate = port.rate_bytes_per_second
            cells = (
                device.name,
                str(port.port),
                port.state or "-",
                port.physical_state or "-",
                port.link_layer or "-",
                "-" if rate is None else f"{rate * 8 / 1e9:g}",
                port.netdev or "-",
                ",".join(device.uverbs) or "-",
                _gigabytes(port.transmit_bytes),
                _gigabytes(port.receive_bytes),
                _gigabytes(tx, 2),
                _gigabytes(rx, 2),
                device.fw_version or "-",
                device.pci_bus_id or "-",
                "-" if device.numa_node is None else str(device.numa_node),
            )
            # Text, never console markup: a device or firmware named "[/]" is shown as it is.
            grid.add_row(*(Text(cell) for cell in cells))
    return Group(grid, *(Text(f"! {problem}", style="yellow") for problem in report.problems))


def to_json(report: RdmaReport) -> dict[str, object]:
    snapshot = report.snapshot
    return {
        "source": snapshot.source if snapshot else None,
        "devices": [dataclasses.asdict(d) for d in snapshot.devices] if snapshot else [],
        "throughput_bytes_per_second": [
            {"device": device, "port": port, "transmit": tx, "receive": rx}
            for (device, port), (tx, rx) in sorted(report.throughput.items())
        ],
        "problems": list(report.problems),
    }


def diagnostic(host: HostConfig) -> showing.Diagnostic[RdmaReport]:
    """`lens rdma` for the host seen at `host.root` (its tools looked for under it)."""
    reader = RdmaReader(node_sources(host, wall_time=time.time))
    return showing.Diagnostic(
        read=reader.read, table=table, to_json=to_json, empty=lambda report: report.snapshot is None
    )
