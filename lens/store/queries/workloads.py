"""Read the workloads the controller stores (gpu_workloads, workload_pod_references, gpu_pods,
kube/workloads/workloadrecording.py) for the API's /v1/workloads, /v1/workloads/{uid} and
/v1/workloadMetadata, with the GPU-seconds of workloadhours.py.

Sorting is on an allow-list of columns; filters are bound parameters. A page is three queries
whatever its size (the original made several per workload and per pod, REFERENCE.md 15.3).
"""

from __future__ import annotations

import dataclasses
import datetime
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import peewee

from lens.store import database, models
from lens.store.queries import workloadhours
from lens.store.queries.reading import Page, contains, reading
from lens.store.queries.workloadhours import Held

TOP_LEVEL = ""  # gpu_workloads.parent_uid of a workload nothing owns

# The API's sort names and the columns they sort by (start_at is the object's creation).
_SORT_COLUMNS = {
    "start_at": "created_at",
    "end_at": "end_at",
    "name": "name",
    "kind": "kind",
    "namespace": "namespace",
    "status": "status",
    "gpu_allocated": "gpu_request",
}
SORTABLE = tuple(_SORT_COLUMNS)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadRecord:
    """A `gpu_workloads` row with the GPU-seconds it held (None: none seen by the agents)."""

    uid: str
    kind: str
    name: str
    namespace: str
    group_version: str
    parent_uid: str
    status: str  # Pending, Running, Succeeded, Failed or Deleted (kube/workloads/rows.py)
    status_reason: str  # why it failed; '' else
    source: str
    gpu_request: int  # GPUs its live pods request (an ended one: what it last requested)
    created_at: datetime.datetime
    end_at: datetime.datetime | None  # None while it runs
    gpu_seconds: Held | None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodPlace:
    """A pod of a workload and the node it was placed on ('' not scheduled)."""

    uid: str
    name: str
    namespace: str
    node_name: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadDetail:
    workload: WorkloadRecord
    pods: tuple[PodPlace, ...]  # every GPU pod it ever had, oldest first


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadFilter:
    """Which top-level workloads a list shows: names containing a text, a kind, a namespace
    and a status ('' any)."""

    name: str = ""
    kind: str = ""
    namespace: str = ""
    status: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadSort:
    column: str = "start_at"
    descending: bool = True

    def __post_init__(self) -> None:
        if self.column not in SORTABLE:
            raise ValueError(f"workloads are not sorted by {self.column!r}")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadPage:
    rows: tuple[WorkloadRecord, ...]
    total: int  # rows matching the filter, on every page


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadMetadata:
    namespaces: tuple[str, ...]
    kinds: tuple[str, ...]


_COLUMNS = (
    "uid",
    "kind",
    "name",
    "namespace",
    "group_version",
    "parent_uid",
    "status",
    "status_reason",
    "source",
    "gpu_request",
    "created_at",
    "end_at",
)


def _select() -> peewee.ModelSelect[models.GpuWorkload]:
    table = models.GpuWorkload
    return table.select(*[getattr(table, c) for c in _COLUMNS])


def _records(rows: Iterable[Sequence[Any]], held: Mapping[str, Held]) -> list[WorkloadRecord]:
    found = []
    for values in rows:
        row = dict(zip(_COLUMNS, values, strict=True))
        found.append(WorkloadRecord(**row, gpu_seconds=held.get(str(row["uid"]))))
    return found


def _where(cluster: str, wanted: WorkloadFilter) -> peewee.ColumnBase:
    table = models.GpuWorkload
    condition: peewee.ColumnBase = (table.cluster == cluster) & (table.parent_uid == TOP_LEVEL)
    if wanted.name:
        condition &= contains(table.name, wanted.name)
    if wanted.kind:
        condition &= table.kind == wanted.kind
    if wanted.namespace:
        condition &= table.namespace == wanted.namespace
    if wanted.status:
        condition &= table.status == wanted.status
    return condition


def _ordering(sort: WorkloadSort) -> list[Any]:
    """The sort column with unknown values (a running workload's end) last either way, then
    the uid: a page boundary falls in the same place on every engine and every request."""
    table = models.GpuWorkload
    column: peewee.Field[Any] = getattr(table, _SORT_COLUMNS[sort.column])
    order = [column.is_null(), column.desc() if sort.descending else column.asc()]
    return [*order, table.uid.asc()]


def list_workloads(
    db: peewee.Database, *, cluster: str, wanted: WorkloadFilter, sort: WorkloadSort, page: Page
) -> WorkloadPage:
    """The page of `cluster`'s top-level workloads that `wanted` selects, in `sort` order."""
    table = models.GpuWorkload
    where = _where(cluster, wanted)
    query = (
        _select()
        .where(where)
        .order_by(*_ordering(sort))
        .offset(page.offset)
        .limit(page.limit)
        .tuples()
    )
    with reading(db):
        rows = list(database.tuple_rows(query))
        held = workloadhours.top_level_seconds(cluster, [str(r[0]) for r in rows])
        total = table.select().where(where).count()
    return WorkloadPage(rows=tuple(_records(rows, held)), total=total)


def _pods(cluster: str, workload_uid: str) -> tuple[PodPlace, ...]:
    pod, refs = models.GpuPod, models.WorkloadPodReference
    query = (
        pod.select(pod.uid, pod.name, pod.namespace, pod.node_name)
        .join(refs, on=(refs.cluster == pod.cluster) & (refs.pod_uid == pod.uid))
        .where((pod.cluster == cluster) & (refs.workload_uid == workload_uid))
        .order_by(pod.created_at, pod.name, pod.uid)
        .tuples()
    )
    return tuple(
        PodPlace(uid=str(u), name=str(n), namespace=str(ns), node_name=str(node))
        for u, n, ns, node in database.tuple_rows(query)
    )


def get_workload(db: peewee.Database, *, cluster: str, uid: str) -> WorkloadDetail | None:
    """One workload (at any level) with its pods, or None when the cluster has no such uid."""
    table = models.GpuWorkload
    query = _select().where((table.cluster == cluster) & (table.uid == uid)).tuples()
    with reading(db):
        rows = list(database.tuple_rows(query))
        if not rows:
            return None
        parent = str(rows[0][_COLUMNS.index("parent_uid")])
        if parent == TOP_LEVEL:
            held = workloadhours.top_level_seconds(cluster, [uid])
        else:
            own = workloadhours.pods_seconds(cluster, uid)
            held = {} if own is None else {uid: own}
        (record,) = _records(rows, held)
        return WorkloadDetail(workload=record, pods=_pods(cluster, uid))


def workload_metadata(db: peewee.Database, *, cluster: str) -> WorkloadMetadata:
    """The namespaces and kinds of the cluster's top-level workloads (what the list filters
    on), each once, sorted; a cluster-scoped workload's empty namespace is left out."""
    table = models.GpuWorkload
    top = (table.cluster == cluster) & (table.parent_uid == TOP_LEVEL)
    namespaces = (
        table.select(table.namespace)
        .where(top & (table.namespace != ""))
        .distinct()
        .order_by(table.namespace)
    )
    kinds = table.select(table.kind).where(top).distinct().order_by(table.kind)
    with reading(db):
        return WorkloadMetadata(
            namespaces=tuple(str(n) for (n,) in database.tuple_rows(namespaces.tuples())),
            kinds=tuple(str(k) for (k,) in database.tuple_rows(kinds.tuples())),
        )


def running_pods(
    db: peewee.Database, *, cluster: str, owners: Iterable[str]
) -> Mapping[str, tuple[PodPlace, ...]]:
    """The running GPU pods of each of `owners` (top-level workload uids, or the uid of a pod
    nothing owns, which is its own owner), oldest first; an owner with none is absent."""
    wanted = sorted(set(owners))
    if not wanted:
        return {}
    pod, refs = models.GpuPod, models.WorkloadPodReference
    live = (pod.cluster == cluster) & pod.running & ~pod.deleted
    owned = (
        pod.select(refs.workload_uid, pod.uid, pod.name, pod.namespace, pod.node_name)
        .join(refs, on=(refs.cluster == pod.cluster) & (refs.pod_uid == pod.uid))
        .where(live & refs.workload_uid.in_(wanted))
    )
    bare = pod.select(pod.uid, pod.uid, pod.name, pod.namespace, pod.node_name).where(
        live & pod.uid.in_(wanted) & (pod.owner_uid == "")
    )
    found: dict[str, list[PodPlace]] = defaultdict(list)
    with reading(db):
        for query in (owned, bare):
            ordered = query.order_by(pod.created_at, pod.name, pod.uid).tuples()
            for owner, uid, name, namespace, node in database.tuple_rows(ordered):
                place = PodPlace(uid=str(uid), name=str(name), namespace=namespace, node_name=node)
                found[str(owner)].append(place)
    return {owner: tuple(pods) for owner, pods in found.items()}
