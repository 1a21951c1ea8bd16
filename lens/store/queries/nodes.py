"""Read the `nodes` table (written by the jobs' node info, kube/cluster/noderows.py): a filtered,
sorted page of nodes and one node by name, for the API's /v1/nodes.

A node's utilization is read from the cluster's latest complete minute when asked
(seriesnow.py), not from the column the node info job keeps: so the list says the same as the
overview and the heatmap, of the same minute, however long ago the job last ran.

Sorting is on an allow-list of columns, never on text a request supplies (REFERENCE.md 15.1
#12); filters are bound parameters.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Sequence
from typing import Any

import peewee

from lens.store import database, models
from lens.store.queries import seriesnow
from lens.store.queries.reading import Page, contains, reading

# The columns a list may be sorted by: the original's, less the ones that are free text.
SORTABLE = (
    "name",
    "address",
    "gpu_name",
    "gpu_count",
    "gpu_allocation",
    "gpu_utilization",
    "status",
    "created_at",
    "updated_at",
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeRecord:
    """A `nodes` row, as the API shows it."""

    name: str
    address: str
    gpu_name: str
    gpu_count: int
    gpu_allocation: int
    gpu_utilization: float | None  # percent; None: no recent report
    status: str
    cpu: str
    cpu_count: int
    memory: str
    memory_bytes: int | None  # None: the node's capacity did not say
    os: str
    kernel_version: str
    kubelet_version: str
    containerd_version: str
    driver_version: str
    taints: str  # JSON list of {key, value, effect}
    created_at: datetime.datetime
    updated_at: datetime.datetime


_COLUMNS = tuple(f.name for f in dataclasses.fields(NodeRecord))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeFilter:
    """Which nodes a list shows: names and GPU models containing a text, statuses in a set."""

    name: str = ""
    gpu_name: str = ""
    statuses: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeSort:
    column: str = "name"
    descending: bool = False

    def __post_init__(self) -> None:
        if self.column not in SORTABLE:
            raise ValueError(f"nodes are not sorted by {self.column!r}")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodePage:
    rows: tuple[NodeRecord, ...]
    total: int  # rows matching the filter, on every page
    minute: datetime.datetime | None  # the minute of gpu_utilization; None: no recent one


def _where(cluster: str, wanted: NodeFilter) -> peewee.ColumnBase:
    node = models.Node
    condition: peewee.ColumnBase = node.cluster == cluster
    if wanted.name:
        condition &= contains(node.name, wanted.name)
    if wanted.gpu_name:
        condition &= contains(node.gpu_name, wanted.gpu_name)
    if wanted.statuses:
        condition &= node.status.in_(list(wanted.statuses))
    return condition


def _busy(cluster: str, minute: datetime.datetime | None) -> Any:
    """Each node's mean utilization (percent) over its GPUs known in `minute` (none without)."""
    gpu = models.GpuMinuteReport
    where = (gpu.cluster == cluster) & gpu.utilization_mean_ratio.is_null(False)
    where &= (gpu.minute == minute) if minute is not None else peewee.Value(False)
    return (
        gpu.select(
            gpu.node_name, (peewee.fn.AVG(gpu.utilization_mean_ratio) * 100.0).alias("percent")
        )
        .where(where)
        .group_by(gpu.node_name)
        .alias("busy")
    )


def _ordering(sort: NodeSort, busy: Any) -> list[Any]:
    """The sort column with unknown values (NULL) last either way, then the name: a page
    boundary falls in the same place on every engine and every request."""
    column: Any = getattr(models.Node, sort.column)
    if sort.column == "gpu_utilization":
        column = busy.c.percent
    order = [column.is_null(), column.desc() if sort.descending else column.asc()]
    if sort.column != "name":
        order.append(models.Node.name.asc())
    return order


def _record(values: Sequence[object]) -> NodeRecord:
    row = dict(zip(_COLUMNS, values, strict=True))
    busy = row["gpu_utilization"]
    row["gpu_utilization"] = None if busy is None else float(busy)  # type: ignore[arg-type]  # a number, by engine
    return NodeRecord(**row)  # type: ignore[arg-type]  # the columns are the fields, typed


def list_nodes(
    db: peewee.Database,
    *,
    cluster: str,
    wanted: NodeFilter,
    sort: NodeSort,
    page: Page,
    now: datetime.datetime,
) -> NodePage:
    """The page of `cluster`'s nodes that `wanted` selects, in `sort` order, and their total;
    utilization as of the latest complete minute at `now`."""
    node = models.Node
    where = _where(cluster, wanted)
    with reading(db):
        minute = seriesnow.latest_minute(cluster, now)
        busy: Any = _busy(cluster, minute)
        columns = [busy.c.percent if c == "gpu_utilization" else getattr(node, c) for c in _COLUMNS]
        query = (
            node.select(*columns)
            .join(busy, peewee.JOIN.LEFT_OUTER, on=(busy.c.node_name == node.name))
            .where(where)
            .order_by(*_ordering(sort, busy))
            .offset(page.offset)
            .limit(page.limit)
            .tuples()
        )
        rows = tuple(_record(values) for values in database.tuple_rows(query))
        total = node.select().where(where).count()
    return NodePage(rows=rows, total=total, minute=minute)


def get_node(db: peewee.Database, *, cluster: str, name: str) -> NodeRecord | None:
    """`cluster`'s node `name`, or None when the table has no such node."""
    node = models.Node
    query = (
        node.select(*[getattr(node, c) for c in _COLUMNS])
        .where((node.cluster == cluster) & (node.name == name))
        .tuples()
    )
    with reading(db):
        found = [_record(values) for values in database.tuple_rows(query)]
    return found[0] if found else None
