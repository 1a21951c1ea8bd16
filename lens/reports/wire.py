"""Node device reports as lens.v1 messages and back (lens/proto/lens/v1/reports.proto).

The node agent encodes a cycle's closed minutes and its device inventory into Records for the
event stream's outbox; `lens jobs` decodes them. As for container events (containers/wire.py),
the encoder makes every value fit what the store holds — a text cut to its column, a figure
that is not finite left unknown — and the decoder refuses a record that does not fit as a
WireError. Unknown stays unknown both ways: an unset optional field is None, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.proto._generated.lens.v1 import reports_pb2 as rpb
from lens.reports.attribution import Attribution, Share
from lens.reports.gpuminutes import GpuMinute
from lens.reports.portminutes import PortMinute
from lens.reports.samples import Holder
from lens.runtime.wirevalues import (
    WireError,
    checked_number,
    checked_seconds,
    checked_text,
    usable_text,
)

# Column sizes of the report tables (lens/store/models/reports.py and nodes.py).
UUID_CHARS = 128
PCI_CHARS = 64
NAME_CHARS = 253  # pod names
NAMESPACE_CHARS = 64
POD_UID_CHARS = 64
CONTAINER_ID_CHARS = 128
DEVICE_CHARS = 64  # an RDMA device's or a counter's or a sensor's name
MAX_COUNT = 2**63 - 1  # a signed 64-bit column


def gpu_minutes_record(minutes: Sequence[GpuMinute], *, correction: bool = False) -> pb.Record:
    """A Record (sequence and time unset: the outbox sets them) carrying `minutes`; with
    `correction`, minutes sent before, sent again with holders learnt since."""
    record = pb.Record()
    record.gpu_minutes.items.extend(_gpu_minute(m, correction=correction) for m in minutes)
    return record


def port_minutes_record(minutes: Sequence[PortMinute]) -> pb.Record:
    record = pb.Record()
    record.port_minutes.items.extend(_port_minute(m) for m in minutes)
    return record


def _gpu_minute(minute: GpuMinute, *, correction: bool) -> rpb.GpuMinute:
    wire = rpb.GpuMinute(
        start=minute.start,
        correction=correction,
        uuid=usable_text(minute.uuid, UUID_CHARS),
        index=_int32(minute.index),
        pci_bus_id=usable_text(minute.pci_bus_id, PCI_CHARS),
        samples=min(minute.samples, 2**32 - 1),
        expected_samples=min(minute.expected_samples, 2**32 - 1),
        idle_seconds=_finite(minute.held_by.idle_seconds) or 0.0,
    )
    for name in _GPU_FIGURES:
        value = _finite(getattr(minute, name))
        if value is not None:
            setattr(wire, name, value)
    if minute.vram_used_max_bytes is not None and 0 <= minute.vram_used_max_bytes <= MAX_COUNT:
        wire.vram_used_max_bytes = minute.vram_used_max_bytes
    wire.temperatures_max_celsius.extend(
        rpb.Reading(name=usable_text(sensor, DEVICE_CHARS), value=celsius)
        for sensor, celsius in minute.temperatures_max_celsius
        if math.isfinite(celsius)
    )
    wire.held_by.extend(_share(share) for share in minute.held_by.shares)
    return wire


_GPU_FIGURES = (
    "utilization_mean_ratio",
    "utilization_max_ratio",
    "memory_activity_mean_ratio",
    "vram_used_mean_bytes",
    "power_mean_watts",
    "energy_joules",
)


def _share(share: Share) -> rpb.Share:
    holder = share.holder
    return rpb.Share(
        namespace=usable_text(holder.namespace, NAMESPACE_CHARS),
        pod_name=usable_text(holder.pod_name, NAME_CHARS),
        container=usable_text(holder.container, NAME_CHARS),
        pod_uid=usable_text(holder.pod_uid, POD_UID_CHARS),
        container_id=usable_text(holder.container_id, CONTAINER_ID_CHARS),
        held_seconds=_finite(share.held_seconds) or 0.0,
        seconds=_finite(share.seconds) or 0.0,
    )


def _port_minute(minute: PortMinute) -> rpb.PortMinute:
    wire = rpb.PortMinute(
        start=minute.start,
        device=usable_text(minute.device, DEVICE_CHARS),
        port=_int32(minute.port),
        samples=min(minute.samples, 2**32 - 1),
        expected_samples=min(minute.expected_samples, 2**32 - 1),
        counter_resets=min(minute.counter_resets, 2**32 - 1),
    )
    for name in _PORT_FIGURES:
        value = _count(getattr(minute, name))
        if value is not None:
            setattr(wire, name, value)
    wire.counters.extend(_increases(minute.counters))
    wire.hw_counters.extend(_increases(minute.hw_counters))
    return wire


_PORT_FIGURES = ("transmit_bytes", "receive_bytes", "transmit_packets", "receive_packets")


def _increases(named: Sequence[tuple[str, int | None]]) -> list[rpb.CounterIncrease]:
    found = []
    for name, value in named:
        wire = rpb.CounterIncrease(name=usable_text(name, DEVICE_CHARS))
        count = _count(value)
        if count is not None:
            wire.increase = count
        found.append(wire)
    return found


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _count(value: int | None) -> int | None:
    return value if value is not None and 0 <= value <= MAX_COUNT else None


def _int32(value: int) -> int:
    return value if -(2**31) <= value < 2**31 else -1


def gpu_minutes(record: pb.Record) -> tuple[GpuMinute, ...]:
    """The GPU-minutes a record carries; WireError when the store cannot hold one of them."""
    return tuple(_read_gpu_minute(m) for m in record.gpu_minutes.items)


def corrections(record: pb.Record) -> int:
    """How many of the GPU-minutes a record carries are corrections."""
    return sum(1 for m in record.gpu_minutes.items if m.correction)


def port_minutes(record: pb.Record) -> tuple[PortMinute, ...]:
    """The port-minutes a record carries; WireError when the store cannot hold one of them."""
    return tuple(_read_port_minute(m) for m in record.port_minutes.items)


def _start(value: int) -> int:
    checked_seconds(value, "minute start")
    if value % 60:
        raise WireError("minute start not on a minute", str(value))
    return value


def _optional(wire: rpb.GpuMinute | rpb.PortMinute, name: str) -> float | None:
    if not wire.HasField(name):
        return None
    value: float = getattr(wire, name)
    return checked_number(value, name)


def _read_gpu_minute(wire: rpb.GpuMinute) -> GpuMinute:
    figures = {name: _optional(wire, name) for name in _GPU_FIGURES}
    vram_max = wire.vram_used_max_bytes if wire.HasField("vram_used_max_bytes") else None
    if vram_max is not None and vram_max < 0:
        raise WireError("count out of range", f"vram_used_max_bytes {vram_max}")
    return GpuMinute(
        start=_start(wire.start),
        uuid=checked_text(wire.uuid, UUID_CHARS, "gpu uuid"),
        index=wire.index,
        pci_bus_id=checked_text(wire.pci_bus_id, PCI_CHARS, "pci_bus_id"),
        samples=wire.samples,
        expected_samples=wire.expected_samples,
        vram_used_max_bytes=vram_max,
        temperatures_max_celsius=tuple(
            (
                checked_text(t.name, DEVICE_CHARS, "sensor"),
                checked_number(t.value, "temperature"),
            )
            for t in wire.temperatures_max_celsius
        ),
        held_by=Attribution(
            shares=tuple(_read_share(s) for s in wire.held_by),
            idle_seconds=checked_number(wire.idle_seconds, "idle_seconds"),
        ),
        **figures,
    )


def _read_share(wire: rpb.Share) -> Share:
    # The cluster is the receiving server's: an agent reports only its own.
    holder = Holder(
        cluster="",
        namespace=checked_text(wire.namespace, NAMESPACE_CHARS, "share.namespace"),
        pod_name=checked_text(wire.pod_name, NAME_CHARS, "share.pod_name"),
        container=checked_text(wire.container, NAME_CHARS, "share.container"),
        pod_uid=checked_text(wire.pod_uid, POD_UID_CHARS, "share.pod_uid"),
        container_id=checked_text(wire.container_id, CONTAINER_ID_CHARS, "share.container_id"),
    )
    return Share(
        holder=holder,
        held_seconds=checked_number(wire.held_seconds, "share.held_seconds"),
        seconds=checked_number(wire.seconds, "share.seconds"),
    )


def _read_port_minute(wire: rpb.PortMinute) -> PortMinute:
    figures = {name: _read_count(wire, name) for name in _PORT_FIGURES}
    return PortMinute(
        start=_start(wire.start),
        device=checked_text(wire.device, DEVICE_CHARS, "device"),
        port=wire.port,
        samples=wire.samples,
        expected_samples=wire.expected_samples,
        counters=_read_increases(wire.counters),
        hw_counters=_read_increases(wire.hw_counters),
        counter_resets=wire.counter_resets,
        **figures,
    )


def _read_count(wire: rpb.PortMinute | rpb.CounterIncrease, name: str) -> int | None:
    if not wire.HasField(name):
        return None
    value: int = getattr(wire, name)
    if value > MAX_COUNT:
        raise WireError("count out of range", f"{name} {value}")
    return value


def _read_increases(
    wires: Sequence[rpb.CounterIncrease],
) -> tuple[tuple[str, int | None], ...]:
    return tuple(
        (checked_text(w.name, DEVICE_CHARS, "counter"), _read_count(w, "increase")) for w in wires
    )
