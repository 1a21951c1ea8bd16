"""The event server's extension for node device reports (containers/server/extending.py):
GPU- and port-minutes and device inventories decoded from agents' records and written in the
transaction of their batch, so that they are committed with the stream's sequence — none lost
across restarts of either side, none written twice.

Minutes repeated within a batch (an agent whose clock stepped back reports a minute again, or
corrects it with a holder learnt late) are written once, the later report winning, as the store
keeps the later report across batches.
Inventories are applied in the order they were recorded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.reports import inventorywire, wire
from lens.reports.gpuminutes import GpuMinute
from lens.reports.inventory import DeviceInventory
from lens.reports.portminutes import PortMinute
from lens.reports.storing.devices import DeviceStore
from lens.reports.storing.minutes import MinuteStore, PreparedMinutes
from lens.runtime.selfmetrics import SelfMetrics


class RecordingMetrics:
    def __init__(self, metrics: SelfMetrics) -> None:
        self.minutes = metrics.counter(
            "lens_reports_minutes_received_total",
            "GPU-minutes and RDMA port-minutes received from node agents and committed (stored, "
            "or refused as counted by lens_reports_minutes_refused_total), by device (gpu, "
            "rdma_port).",
            ("device",),
        )
        self.corrections = metrics.counter(
            "lens_reports_corrections_received_total",
            "GPU-minutes received again from node agents as corrections (a holder of theirs "
            "learnt late), each replacing the minute stored, and committed.",
        )
        self.refused = metrics.counter(
            "lens_reports_minutes_refused_total",
            "Minutes not stored because they were older than the minutes' retention or more "
            "than a day ahead of this server's clock, by reason (too_old, too_new).",
            ("reason",),
        )
        self.changes = metrics.counter(
            "lens_device_changes_total",
            "Device changelog rows written from node agents' inventories, by op (CREATE, "
            "UPDATE, DELETE).",
            ("op",),
        )


@dataclasses.dataclass(frozen=True, slots=True)
class _Minutes:
    gpu: tuple[GpuMinute, ...] = ()
    ports: tuple[PortMinute, ...] = ()
    corrections: int = 0  # of `gpu`


@dataclasses.dataclass(slots=True)
class PreparedReports:
    minutes: PreparedMinutes
    gpu_minutes: int
    port_minutes: int
    corrections: int
    inventories: tuple[DeviceInventory, ...]
    changes: dict[str, int] = dataclasses.field(default_factory=dict)  # op -> rows, once written


class ReportRecorder:
    """Registered with the event server by `lens jobs`; one per cluster."""

    bodies = frozenset({"gpu_minutes", "port_minutes", "devices"})

    def __init__(
        self, *, minutes: MinuteStore, devices: DeviceStore, metrics: RecordingMetrics
    ) -> None:
        self._minutes = minutes
        self._devices = devices
        self._metrics = metrics

    def decode(self, record: pb.Record) -> object:
        body = record.WhichOneof("body")
        if body == "gpu_minutes":
            return _Minutes(gpu=wire.gpu_minutes(record), corrections=wire.corrections(record))
        if body == "port_minutes":
            return _Minutes(ports=wire.port_minutes(record))
        return inventorywire.device_inventory(record)

    def prepare(self, node: str, values: Sequence[object]) -> PreparedReports:
        gpu: dict[tuple[str, int], GpuMinute] = {}
        ports: dict[tuple[str, int, int], PortMinute] = {}
        inventories: list[DeviceInventory] = []
        corrections = 0
        for value in values:
            if isinstance(value, _Minutes):
                corrections += value.corrections
                gpu.update(((m.uuid, m.start), m) for m in value.gpu)
                ports.update(((m.device, m.port, m.start), m) for m in value.ports)
            elif isinstance(value, DeviceInventory):
                inventories.append(value)
        return PreparedReports(
            minutes=self._minutes.prepare(node, list(gpu.values()), list(ports.values())),
            gpu_minutes=len(gpu),
            port_minutes=len(ports),
            corrections=corrections,
            inventories=tuple(inventories),
        )

    def before_write(self, prepared: object) -> None:
        assert isinstance(prepared, PreparedReports)
        self._minutes.before_write(prepared.minutes)

    def write(self, batches: Sequence[tuple[str, object]]) -> None:
        reports = [(node, _reports(prepared)) for node, prepared in batches]
        # Devices first: the minutes' per-pod sums take each GPU's VRAM size from its row, and
        # a new node's first batch brings both.
        for node, prepared in reports:
            changes: dict[str, int] = {}
            for inventory in prepared.inventories:
                for op, rows in self._devices.write(node, inventory).by_op().items():
                    changes[op] = changes.get(op, 0) + rows
            prepared.changes = changes
        self._minutes.write_many([prepared.minutes for _, prepared in reports])

    def committed(self, prepared: object) -> None:
        assert isinstance(prepared, PreparedReports)
        self._metrics.minutes.labels("gpu").inc(prepared.gpu_minutes)
        self._metrics.minutes.labels("rdma_port").inc(prepared.port_minutes)
        self._metrics.corrections.inc(prepared.corrections)
        dropped = prepared.minutes.dropped
        self._metrics.refused.labels("too_old").inc(dropped.too_old)
        self._metrics.refused.labels("too_new").inc(dropped.too_new)
        for op, rows in prepared.changes.items():
            self._metrics.changes.labels(op).inc(rows)


def _reports(prepared: object) -> PreparedReports:
    assert isinstance(prepared, PreparedReports)
    return prepared
