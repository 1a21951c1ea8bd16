"""The GPU figures of the cluster now, for the API: each node's allocation (/v1/nodes/
gpuAllocation, from the `nodes` table), the cluster's allocation and utilization
(/v1/nodes/gpuUtilization) and the heatmap of its busiest nodes (/v1/clusters/gpuHeatmap), the
last two from the latest complete minute of gpu_minutes.

A minute is complete once every agent's report of it is in: two minutes after it ended, as the
jobs wait (roles/jobs/nodeinfo.py). The latest complete minute is the newest minute stored that
is that old, and no older than RECENT: a cluster whose agents fell silent has none, and its
utilization is unknown rather than an old figure.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Sequence
from typing import Any

import peewee

from lens.store import database, models
from lens.store.queries.reading import reading

SETTLE = datetime.timedelta(minutes=2)
MINUTE = datetime.timedelta(minutes=1)
DAY = datetime.timedelta(days=1)
RECENT = datetime.timedelta(minutes=10)
DELETED = "Deleted"  # a node that left the cluster keeps its row (kube/cluster/noderows.py)
# The heatmap's nodes at most: every node of a large cluster (the dashboard asks for all of
# them: one answer of 24,000 cells at 1,000 8-GPU nodes, ~110 ms); the original's default is 5.
MAX_TOP_NODES = 10_000


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeAllocation:
    node: str
    vendor: str | None  # of its GPUs in the agents' inventory; None: not reported
    capacity: int
    allocated: int
    rate: float  # allocated / capacity, 0..1


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClusterUtilization:
    allocation_percent: float | None  # None: no GPU in the cluster
    utilization_percent: float | None  # None: no complete minute with a known utilization
    minute: datetime.datetime | None  # the latest complete minute; None: none recent


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HeatCell:
    node_name: str
    gpu_index: int
    value: float
    held: bool  # held by a container for some of the minute


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Heatmap:
    """Each figure's top nodes' GPUs (nodes by their GPUs' mean, highest first; GPUs by index)
    in `minute`, the latest complete one (None: none; then every figure is empty)."""

    minute: datetime.datetime | None
    power: tuple[HeatCell, ...]  # watts
    temperature: tuple[HeatCell, ...]  # celsius: junction, else the core (NVIDIA's "gpu")
    utilization: tuple[HeatCell, ...]  # percent


def _floor_minute(moment: datetime.datetime) -> datetime.datetime:
    return moment.replace(second=0, microsecond=0)


def newest_minute(
    db: peewee.Database, *, cluster: str, now: datetime.datetime
) -> datetime.datetime | None:
    """The start of the newest minute stored of the last day, none after `now` (a clock
    ahead is ignored); None when none."""
    gpu = models.GpuMinuteReport
    query = gpu.select(peewee.fn.MAX(gpu.minute)).where(
        (gpu.cluster == cluster) & (gpu.minute <= now) & (gpu.minute >= now - DAY)
    )
    with reading(db):
        found = query.scalar()
    return gpu.minute.python_value(found)  # type: ignore[no-any-return]  # an aware datetime


def readings_stale(newest: datetime.datetime, now: datetime.datetime) -> bool:
    """Whether `newest`, the newest minute stored, says the agents stopped reporting: a minute
    is stored moments after it ends, so one that ended over two minutes ago is late."""
    return now - (newest + MINUTE) > 2 * MINUTE


def minute_stale(minute: datetime.datetime, now: datetime.datetime) -> bool:
    """Whether `minute`, the latest complete one at `now`, is stale: it is read a minute after
    it ended (SETTLE), and a newer one is due each minute; two minutes more and the agents'
    reports are late, or the agents silent."""
    return now - (minute + MINUTE) > SETTLE + 2 * MINUTE


def latest_minute(cluster: str, now: datetime.datetime) -> datetime.datetime | None:
    """The start of the cluster's latest complete minute (see the module's docstring)."""
    gpu = models.GpuMinuteReport
    newest = _floor_minute(now - SETTLE)
    query = gpu.select(peewee.fn.MAX(gpu.minute)).where(
        (gpu.cluster == cluster)
        & (gpu.minute <= newest)
        & (gpu.minute >= _floor_minute(now) - RECENT)
    )
    found = query.scalar()
    return gpu.minute.python_value(found)  # type: ignore[no-any-return]  # an aware datetime


def _live_nodes(cluster: str) -> Any:
    node = models.Node
    return (node.cluster == cluster) & (node.status != DELETED) & (node.gpu_count > 0)


def _vendors(cluster: str) -> dict[str, str]:
    device = models.GpuDevice
    query = (
        device.select(device.node_name, peewee.fn.MAX(device.vendor))
        .where((device.cluster == cluster) & device.deleted_at.is_null() & (device.vendor != ""))
        .group_by(device.node_name)
        .tuples()
    )
    return {str(node): str(vendor) for node, vendor in database.tuple_rows(query)}


def gpu_allocation(db: peewee.Database, *, cluster: str) -> tuple[NodeAllocation, ...]:
    """Every node with GPUs and not deleted, by name: GPUs held (the jobs' count in `nodes`)
    over its GPU capacity."""
    node = models.Node
    query = (
        node.select(node.name, node.gpu_count, node.gpu_allocation)
        .where(_live_nodes(cluster))
        .order_by(node.name)
        .tuples()
    )
    with reading(db):
        rows = list(database.tuple_rows(query))
        vendors = _vendors(cluster)
    return tuple(
        NodeAllocation(
            node=str(name),
            vendor=vendors.get(str(name)),
            capacity=int(count),
            allocated=int(held),
            rate=int(held) / int(count),
        )
        for name, count, held in rows
    )


def _allocation_percent(cluster: str) -> float | None:
    node = models.Node
    query = node.select(peewee.fn.SUM(node.gpu_allocation), peewee.fn.SUM(node.gpu_count)).where(
        _live_nodes(cluster)
    )
    held, count = next(iter(database.tuple_rows(query.tuples())))
    if not count:
        return None
    return 100.0 * float(held or 0) / float(count)


def utilization_in(cluster: str, minute: datetime.datetime | None) -> float | None:
    """The mean utilization (percent) of the GPUs whose utilization is known in `minute`, each
    GPU weighing the same; None without a minute or a GPU known in it."""
    if minute is None:
        return None
    gpu = models.GpuMinuteReport
    mean = (
        gpu.select(peewee.fn.AVG(gpu.utilization_mean_ratio))
        .where((gpu.cluster == cluster) & (gpu.minute == minute))
        .scalar()
    )
    return None if mean is None else 100.0 * float(mean)


def cluster_utilization(
    db: peewee.Database, *, cluster: str, now: datetime.datetime
) -> ClusterUtilization:
    """GPUs held over GPU capacity (the nodes not deleted), and the mean utilization of the
    GPUs reported in the latest complete minute, each GPU weighing the same."""
    with reading(db):
        allocation = _allocation_percent(cluster)
        minute = latest_minute(cluster, now)
        utilization = utilization_in(cluster, minute)
    return ClusterUtilization(
        allocation_percent=allocation, utilization_percent=utilization, minute=minute
    )


def _figures() -> dict[str, peewee.ColumnBase]:
    gpu = models.GpuMinuteReport
    return {
        "power": gpu.power_mean_watts,
        "temperature": peewee.fn.COALESCE(
            gpu.temperature_junction_celsius, gpu.temperature_gpu_celsius
        ),
        "utilization": gpu.utilization_mean_ratio * 100.0,
    }


def _top_nodes(
    cluster: str, minute: datetime.datetime, figure: peewee.ColumnBase, k: int
) -> list[str]:
    gpu = models.GpuMinuteReport
    average = peewee.fn.AVG(figure)
    query = (
        gpu.select(gpu.node_name)
        .where((gpu.cluster == cluster) & (gpu.minute == minute) & figure.is_null(False))
        .group_by(gpu.node_name)
        .order_by(average.desc(), gpu.node_name)
        .limit(k)
        .tuples()
    )
    return [str(node) for (node,) in database.tuple_rows(query)]


def _cells(
    cluster: str, minute: datetime.datetime, nodes: Sequence[str]
) -> dict[str, list[tuple[Any, ...]]]:
    """Per node, its GPUs' (index, *figures, held) in `minute`, by index."""
    gpu = models.GpuMinuteReport
    query = (
        gpu.select(gpu.node_name, gpu.gpu_index, *_figures().values(), gpu.idle_seconds)
        .where((gpu.cluster == cluster) & (gpu.minute == minute) & gpu.node_name.in_(nodes))
        .order_by(gpu.node_name, gpu.gpu_index)
        .tuples()
    )
    found: dict[str, list[tuple[Any, ...]]] = {}
    for node, *values in database.tuple_rows(query):
        # The last value is the idle seconds: held at all unless idle the whole minute.
        values[-1] = values[-1] is not None and float(values[-1]) < MINUTE.total_seconds()
        found.setdefault(str(node), []).append(tuple(values))
    return found


def heatmap(db: peewee.Database, *, cluster: str, now: datetime.datetime, k: int = 5) -> Heatmap:
    """The GPUs of the `k` nodes highest in each figure (1 to MAX_TOP_NODES), in the latest
    complete minute; a GPU whose figure is unknown has no cell of it."""
    if not 1 <= k <= MAX_TOP_NODES:
        raise ValueError(f"k must be from 1 to {MAX_TOP_NODES}")
    figures = _figures()
    with reading(db):
        minute = latest_minute(cluster, now)
        if minute is None:
            return Heatmap(minute=None, power=(), temperature=(), utilization=())
        tops = {name: _top_nodes(cluster, minute, f, k) for name, f in figures.items()}
        cells = _cells(cluster, minute, sorted({n for nodes in tops.values() for n in nodes}))
    by_figure: dict[str, tuple[HeatCell, ...]] = {}
    for position, name in enumerate(figures):
        by_figure[name] = tuple(
            HeatCell(
                node_name=node,
                gpu_index=int(row[0]),
                value=float(row[1 + position]),
                held=bool(row[-1]),
            )
            for node in tops[name]
            for row in cells.get(node, [])
            if row[1 + position] is not None
        )
    return Heatmap(minute=minute, **by_figure)
