"""Read every GPU of a cluster with its live figures and its holder, for the API's /v1/gpus: the
GPUs present (gpu_devices) of nodes not Deleted, each beside its latest GPU-minute (gpu_minutes,
written by reports/storing/minutes.py) of the last FRESH, and who held it in that minute
(gpu_minute_holders) with the pod's top-level workload (workload_pod_references, gpu_workloads).

Filters are bound parameters; sorting is on an allow-list of columns.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections import defaultdict
from collections.abc import Collection, Iterable
from typing import Any

import peewee

from lens.store import database, models
from lens.store.queries.reading import Page, contains, reading

# A GPU whose latest minute is older than this has no live figures (None): its agent stopped
# reporting, and an old figure shown as current would mislead.
FRESH = datetime.timedelta(minutes=5)
DELETED = "Deleted"  # a node that left the cluster keeps its row (kube/cluster/noderows.py)

# The columns a list may be sorted by, each with what it sorts on.
SORTABLE = ("node", "model", "utilization", "memory_used", "power", "temperature")

_LIVE = models.GpuMinuteReport.alias("live")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """A workload named: a top-level workload of gpu_workloads, or a pod without one."""

    uid: str
    kind: str
    name: str
    namespace: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Holder:
    """A pod that held a GPU in a minute (its containers together); pod fields '' for
    containers outside any pod."""

    namespace: str
    pod_name: str
    pod_uid: str
    containers: tuple[str, ...]
    held_seconds: float  # how long it held the GPU in the minute
    workload: Workload | None  # its top-level workload; None: none known


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuRecord:
    """A GPU present now, with the figures of its latest minute (None: no fresh minute)."""

    node_name: str
    gpu_id: int  # the index the node gives it; -1: unknown
    uuid: str
    gpu_model: str
    vram_bytes: int | None
    minute: datetime.datetime | None  # the start of the minute the figures are of
    utilization_ratio: float | None
    vram_used_bytes: float | None  # the minute's mean
    power_watts: float | None  # the minute's mean
    temperature_celsius: float | None  # the minute's greatest, over every sensor
    holders: tuple[Holder, ...]  # longest held first; () free (or no fresh minute)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuFilter:
    node: str = ""  # "": every node; else that node's name exactly
    model: str = ""  # the model contains it, any case
    holder_namespace: str = ""  # held in its latest minute by a pod of this namespace


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuSort:
    column: str = "node"
    descending: bool = False

    def __post_init__(self) -> None:
        if self.column not in SORTABLE:
            raise ValueError(f"GPUs are not sorted by {self.column!r}")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuPage:
    rows: tuple[GpuRecord, ...]
    total: int  # GPUs matching the filter, on every page


DEVICE_SORTS = ("node", "model")  # sorts on gpu_devices' own columns


def _sort_columns() -> dict[str, peewee.ColumnBase]:
    device = models.GpuDevice
    return {
        "node": device.node_name,
        "model": device.gpu_model,
        "utilization": _LIVE.utilization_mean_ratio,
        "memory_used": _LIVE.vram_used_mean_bytes,
        "power": _LIVE.power_mean_watts,
        "temperature": _LIVE.temperature_max_celsius,
    }


def _latest(
    cluster: str, now: datetime.datetime, nodes: Collection[str] | None
) -> peewee.SelectQuery:
    """Each GPU's latest minute of the last FRESH (none after `now`: a clock ahead is ignored),
    of `nodes` only when given."""
    gpu = models.GpuMinuteReport
    where = (gpu.cluster == cluster) & (gpu.minute >= now - FRESH) & (gpu.minute <= now)
    if nodes is not None:
        where &= gpu.node_name.in_(sorted(nodes))
    return (
        gpu.select(gpu.node_name, gpu.gpu_uuid, peewee.fn.MAX(gpu.minute).alias("latest"))
        .where(where)
        .group_by(gpu.node_name, gpu.gpu_uuid)
        .alias("latest")
    )


def _joined(
    query: peewee.ModelSelect[Any],
    cluster: str,
    now: datetime.datetime,
    nodes: Collection[str] | None = None,
) -> Any:
    """`query` over gpu_devices with its node's row and its latest fresh minute (_LIVE)."""
    device, node = models.GpuDevice, models.Node
    latest: Any = _latest(cluster, now, nodes)  # its columns (latest.c) are not in the stubs
    return (
        query.join_from(
            device,
            node,
            peewee.JOIN.LEFT_OUTER,
            on=(node.cluster == device.cluster) & (node.name == device.node_name),
        )
        .join_from(
            device,
            latest,
            peewee.JOIN.LEFT_OUTER,
            on=(latest.c.node_name == device.node_name) & (latest.c.gpu_uuid == device.uuid),
        )
        .join_from(
            device,
            _LIVE,
            peewee.JOIN.LEFT_OUTER,
            on=(_LIVE.cluster == device.cluster)
            & (_LIVE.node_name == device.node_name)
            & (_LIVE.gpu_uuid == device.uuid)
            & (_LIVE.minute == latest.c.latest),
        )
    )


def _where(cluster: str, wanted: GpuFilter) -> peewee.ColumnBase:
    device, node = models.GpuDevice, models.Node
    condition: peewee.ColumnBase = (
        (device.cluster == cluster)
        & device.deleted_at.is_null()
        & (node.status.is_null() | (node.status != DELETED))
    )
    if wanted.node:
        condition &= device.node_name == wanted.node
    if wanted.model:
        condition &= contains(device.gpu_model, wanted.model)
    if wanted.holder_namespace:
        held = models.GpuMinuteHolder
        by_namespace = held.select(peewee.SQL("1")).where(
            (held.cluster == device.cluster)
            & (held.node_name == device.node_name)
            & (held.minute == _LIVE.minute)
            & (held.gpu_uuid == device.uuid)
            & (held.namespace == wanted.holder_namespace)
        )
        condition &= peewee.fn.EXISTS(by_namespace)
    return condition


def _ordering(sort: GpuSort) -> list[Any]:
    """The sort column with unknown values (NULL) last either way, then node and index: a page
    boundary falls in the same place on every engine and every request."""
    device = models.GpuDevice
    column = _sort_columns()[sort.column]
    order = [column.is_null(), column.desc() if sort.descending else column.asc()]
    if sort.column == "node":
        index = device.gpu_id.desc() if sort.descending else device.gpu_id.asc()
        return [*order, index, device.uuid.asc()]
    return [*order, device.node_name.asc(), device.gpu_id.asc(), device.uuid.asc()]


_MinuteKey = tuple[str, str, datetime.datetime]  # node, GPU uuid, minute


def _record(values: tuple[Any, ...], holders: dict[_MinuteKey, tuple[Holder, ...]]) -> GpuRecord:
    node_name, gpu_id, uuid, model, vram, minute = values[:6]
    utilization, vram_used, power, temperature = values[6:]
    return GpuRecord(
        node_name=str(node_name),
        gpu_id=int(gpu_id),
        uuid=str(uuid),
        gpu_model=str(model),
        vram_bytes=None if vram is None else int(vram),
        minute=minute,
        utilization_ratio=utilization,
        vram_used_bytes=vram_used,
        power_watts=power,
        temperature_celsius=temperature,
        holders=holders.get((str(node_name), str(uuid), minute), ()),
    )


def list_gpus(
    db: peewee.Database,
    *,
    cluster: str,
    wanted: GpuFilter,
    sort: GpuSort,
    page: Page,
    now: datetime.datetime,
) -> GpuPage:
    """The page of `cluster`'s GPUs that `wanted` selects, in `sort` order, as of `now`."""
    device = models.GpuDevice
    columns = (
        device.node_name,
        device.gpu_id,
        device.uuid,
        device.gpu_model,
        device.vram_bytes,
        _LIVE.minute,
        _LIVE.utilization_mean_ratio,
        _LIVE.vram_used_mean_bytes,
        _LIVE.power_mean_watts,
        _LIVE.temperature_max_celsius,
    )
    where = _where(cluster, wanted)
    by_device = sort.column in DEVICE_SORTS and not wanted.holder_namespace
    with reading(db):
        if by_device:
            found, total = _by_device(columns, where, cluster, sort, page, now)
        else:
            query = _joined(device.select(*columns), cluster, now).where(where)
            query = query.offset(page.offset).limit(page.limit)
            total = _joined(device.select(), cluster, now).where(where).count()
            found = list(database.tuple_rows(query.order_by(*_ordering(sort)).tuples()))
        minutes = {(str(r[0]), str(r[2]), r[5]) for r in found if r[5] is not None}
        holders = _holders(cluster, minutes)
    rows = tuple(_record(values, holders) for values in found)
    return GpuPage(rows=rows, total=total)


def _by_device(
    columns: tuple[Any, ...],
    where: Any,
    cluster: str,
    sort: GpuSort,
    page: Page,
    now: datetime.datetime,
) -> tuple[list[tuple[Any, ...]], int]:
    """A page chosen from gpu_devices alone, and only its nodes' minutes read: not the latest
    minute of every GPU of the cluster for a page of ten. Its rows and the total."""
    device = models.GpuDevice
    keys = list(
        database.tuple_rows(
            _with_node(device.select(device.node_name, device.uuid))
            .where(where)
            .order_by(*_ordering(sort))
            .offset(page.offset)
            .limit(page.limit)
            .tuples()
        )
    )
    nodes = {str(n) for n, _ in keys}
    # The page's nodes and uuids, then its exact (node, uuid) pairs: a uuid may repeat on
    # another node of the page. (A condition per pair nests one OR per GPU: a page of a
    # thousand overflows the SQL builder's recursion.)
    chosen = device.node_name.in_(sorted(nodes)) & device.uuid.in_(
        sorted({str(u) for _, u in keys})
    )
    query = _joined(device.select(*columns), cluster, now, nodes).where(where & chosen)
    total = _with_node(device.select()).where(where).count()
    pairs = {(str(n), str(u)) for n, u in keys}
    found = database.tuple_rows(query.order_by(*_ordering(sort)).tuples())
    return [r for r in found if (str(r[0]), str(r[2])) in pairs], total


def _with_node(query: peewee.ModelSelect[Any]) -> Any:
    device, node = models.GpuDevice, models.Node
    return query.join_from(
        device,
        node,
        peewee.JOIN.LEFT_OUTER,
        on=(node.cluster == device.cluster) & (node.name == device.node_name),
    )


def _holders(cluster: str, minutes: Collection[_MinuteKey]) -> dict[_MinuteKey, tuple[Holder, ...]]:
    """Who held each of these GPU-minutes, one Holder per pod, longest held first."""
    if not minutes:
        return {}
    held = models.GpuMinuteHolder
    query = (
        held.select(
            held.node_name,
            held.gpu_uuid,
            held.minute,
            held.namespace,
            held.pod_name,
            held.pod_uid,
            held.container_name,
            held.held_seconds,
        )
        .where(
            (held.cluster == cluster)
            & held.node_name.in_(sorted({node for node, _, _ in minutes}))
            & held.gpu_uuid.in_(sorted({uuid for _, uuid, _ in minutes}))
            & held.minute.in_(sorted({minute for _, _, minute in minutes}))
        )
        .tuples()
    )
    pods: dict[_MinuteKey, dict[tuple[str, str, str], list[tuple[str, float]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for node, uuid, minute, namespace, pod_name, pod_uid, container, seconds in database.tuple_rows(
        query
    ):
        if (node, uuid, minute) in minutes:
            pods[node, uuid, minute][namespace, pod_name, pod_uid].append((container, seconds))
    tops = top_workloads(cluster, {uid for by_pod in pods.values() for _, _, uid in by_pod if uid})
    return {key: _pod_holders(by_pod, tops) for key, by_pod in pods.items()}


def _pod_holders(
    by_pod: dict[tuple[str, str, str], list[tuple[str, float]]], tops: dict[str, Workload]
) -> tuple[Holder, ...]:
    holders = [
        Holder(
            namespace=namespace,
            pod_name=pod_name,
            pod_uid=pod_uid,
            containers=tuple(sorted(name for name, _ in containers)),
            # Its containers held the GPU at once or in turn: the longest is a lower bound
            # that never exceeds the minute.
            held_seconds=max(float(seconds) for _, seconds in containers),
            workload=tops.get(pod_uid),
        )
        for (namespace, pod_name, pod_uid), containers in by_pod.items()
    ]
    return tuple(sorted(holders, key=lambda h: (-h.held_seconds, h.namespace, h.pod_name)))


def top_workloads(cluster: str, pod_uids: Iterable[str]) -> dict[str, Workload]:
    """Each pod's top-level workload, from the references the controller writes for every
    level of a pod's owners (a pod without one is left out). In the caller's session."""
    uids = sorted(set(pod_uids))
    if not uids:
        return {}
    reference, workload = models.WorkloadPodReference, models.GpuWorkload
    query = (
        reference.select(
            reference.pod_uid, workload.uid, workload.kind, workload.name, workload.namespace
        )
        .join(
            workload,
            on=(workload.cluster == reference.cluster) & (workload.uid == reference.workload_uid),
        )
        .where(
            (reference.cluster == cluster)
            & reference.pod_uid.in_(uids)
            & (workload.parent_uid == "")
        )
        .order_by(reference.pod_uid, workload.uid)
        .tuples()
    )
    found: dict[str, Workload] = {}
    for pod_uid, uid, kind, name, namespace in database.tuple_rows(query):
        found.setdefault(
            str(pod_uid),
            Workload(uid=str(uid), kind=str(kind), name=str(name), namespace=str(namespace)),
        )
    return found
