"""The rows of gpu_minutes, gpu_minute_holders and rdma_port_minutes made from GPU- and
port-minutes (minutes.py writes them): each table's columns, and a row's values in their order,
with what the columns cannot hold (NaN, infinities, counts past their integer) left out."""

from __future__ import annotations

import datetime
import math
from collections.abc import Sequence

from lens.reports.gpuminutes import GpuMinute
from lens.reports.portminutes import PortMinute

SENSORS = ("edge", "junction", "memory", "gpu")  # the sensors with a column of their own
MAX_INT = 2**31 - 1
MAX_COUNT = 2**63 - 1


def _names(*groups: str) -> tuple[str, ...]:
    return tuple(name for group in groups for name in group.split())


# The columns of each table's rows, in the order the row functions below make their values.
GPU_COLUMNS = _names(
    "cluster node_name gpu_uuid gpu_index pci_bus_id minute samples expected_samples",
    "utilization_mean_ratio utilization_max_ratio memory_activity_mean_ratio",
    "vram_used_mean_bytes vram_used_max_bytes power_mean_watts energy_joules",
    "temperature_max_celsius",
    *(f"temperature_{sensor}_celsius" for sensor in SENSORS),
    "idle_seconds holders",
)
HOLDER_COLUMNS = _names(
    "cluster node_name gpu_uuid minute container_id namespace pod_name pod_uid",
    "container_name seconds held_seconds",
)
PORT_COLUMNS = _names(
    "cluster node_name device port minute samples expected_samples transmit_bytes",
    "receive_bytes transmit_packets receive_packets errors counters hw_counters",
    "counter_resets",
)
PENDING_COLUMNS = ("cluster", "node_name", "hour", "token", "marked_at")


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def gpu_row(
    minute: GpuMinute, *, cluster: str, node: str, start: datetime.datetime
) -> tuple[object, ...]:
    """The gpu_minutes row (GPU_COLUMNS) of one GPU-minute starting at `start`."""
    temperatures = {s: c for s, c in minute.temperatures_max_celsius if math.isfinite(c)}
    return (
        cluster,
        node,
        minute.uuid,
        minute.index,
        minute.pci_bus_id,
        start,
        min(minute.samples, MAX_INT),
        min(minute.expected_samples, MAX_INT),
        _finite(minute.utilization_mean_ratio),
        _finite(minute.utilization_max_ratio),
        _finite(minute.memory_activity_mean_ratio),
        _finite(minute.vram_used_mean_bytes),
        minute.vram_used_max_bytes,
        _finite(minute.power_mean_watts),
        _finite(minute.energy_joules),
        max(temperatures.values(), default=None),
        *(temperatures.get(sensor) for sensor in SENSORS),
        _finite(minute.held_by.idle_seconds) or 0.0,
        len(minute.held_by.shares),
    )


def holder_rows(
    minute: GpuMinute, *, cluster: str, node: str, start: datetime.datetime
) -> list[tuple[object, ...]]:
    """The gpu_minute_holders rows (HOLDER_COLUMNS) of one GPU-minute's shares."""
    return [
        (
            cluster,
            node,
            minute.uuid,
            start,
            share.holder.container_id,
            share.holder.namespace,
            share.holder.pod_name,
            share.holder.pod_uid,
            share.holder.container,
            _finite(share.seconds) or 0.0,
            _finite(share.held_seconds) or 0.0,
        )
        for share in minute.held_by.shares
    ]


def port_row(
    minute: PortMinute, *, cluster: str, node: str, start: datetime.datetime
) -> tuple[object, ...]:
    """The rdma_port_minutes row (PORT_COLUMNS) of one port-minute."""
    known = [v for _, v in (*minute.counters, *minute.hw_counters) if v is not None]
    return (
        cluster,
        node,
        minute.device,
        minute.port,
        start,
        min(minute.samples, MAX_INT),
        min(minute.expected_samples, MAX_INT),
        minute.transmit_bytes,
        minute.receive_bytes,
        minute.transmit_packets,
        minute.receive_packets,
        min(sum(known), MAX_COUNT) if known else None,
        _increases(minute.counters),
        _increases(minute.hw_counters),
        min(minute.counter_resets, MAX_INT),
    )


def _increases(named: Sequence[tuple[str, int | None]]) -> dict[str, int | None] | None:
    """Each counter that rose or is unknown, with its increase; None: no counter was read."""
    if not named:
        return None
    return {name: value for name, value in named if value != 0}
