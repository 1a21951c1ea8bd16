"""Read the GPU-hours per day (gpu_hours_daily, summed by the jobs' gpu-hours loop,
lens/usage/gpuhours.py) over a range of whole UTC days, per group of one kind (namespace,
top-level workload, or a label's value) and GPU model, for the API's /v1/gpuHours.

The sums are the database's (one row per group and model, however many days); workloads are
named from gpu_workloads, a pod without an owner (its own group) from gpu_pods.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable
from typing import Any

import peewee

from lens.store import database, models
from lens.store.models.usage import LABEL_KEY
from lens.store.queries.gpus import Workload
from lens.store.queries.reading import Page, reading

# The group kinds of gpu_hours_daily (lens/usage/gpuhours.py writes them).
NAMESPACE, WORKLOAD, LABEL = "namespace", "workload", "label"
KINDS = (NAMESPACE, WORKLOAD, LABEL)

# The columns a list may be sorted by; group and model break ties.
SORTABLE = ("held_gpu_hours", "used_gpu_hours", "measured_gpu_hours", "group", "gpu_model")

_CHUNK = 500  # uids per IN list when naming workloads
MAX_LABEL_KEY = LABEL_KEY  # the longest label key the table holds


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GroupBy:
    kind: str  # namespace, workload or label
    key: str = ""  # the label's key for kind label; '' else

    def __post_init__(self) -> None:
        if self.kind not in KINDS or (self.kind == LABEL) != bool(self.key):
            raise ValueError(f"no GPU-hours grouped by {self.kind!r}/{self.key!r}")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Days:
    """The UTC days first through last, both included."""

    first: datetime.date
    last: datetime.date

    def __post_init__(self) -> None:
        if self.last < self.first:
            raise ValueError("the last day is before the first")

    def starts(self) -> tuple[datetime.datetime, datetime.datetime]:
        """The first and last days' starts (gpu_hours_daily.day holds a day's start)."""
        return (
            datetime.datetime.combine(self.first, datetime.time(), tzinfo=datetime.UTC),
            datetime.datetime.combine(self.last, datetime.time(), tzinfo=datetime.UTC),
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HoursSort:
    column: str = "held_gpu_hours"
    descending: bool = True

    def __post_init__(self) -> None:
        if self.column not in SORTABLE:
            raise ValueError(f"GPU-hours are not sorted by {self.column!r}")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GroupHours:
    """One group's GPU-hours on one GPU model over the days."""

    kind: str
    key: str
    value: str  # the namespace, the workload's uid, or the label's value ('' without)
    gpu_model: str  # '' when the GPU's model is not known
    held_gpu_hours: float
    used_gpu_hours: float
    measured_gpu_hours: float
    workload: Workload | None  # kind workload: what it is; None: not known (or another kind)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HoursPage:
    rows: tuple[GroupHours, ...]
    total: int  # rows (group and model) over every page


def label_keys(db: peewee.Database, *, cluster: str) -> tuple[str, ...]:
    """The label keys whose GPU-hours the table holds for `cluster` (jobs.team_label, and
    any it was before)."""
    table = models.GpuHoursDaily
    query = (
        table.select(table.group_key)
        .where((table.cluster == cluster) & (table.group_kind == LABEL))
        .distinct()
        .order_by(table.group_key)
        .tuples()
    )
    with reading(db):
        return tuple(str(key) for (key,) in database.tuple_rows(query))


def _ordering(sort: HoursSort, sums: dict[str, Any]) -> list[Any]:
    table = models.GpuHoursDaily

    def ordered(column: Any) -> Any:
        return column.desc() if sort.descending else column.asc()

    if sort.column == "group":
        return [ordered(table.group_value), ordered(table.gpu_model)]
    if sort.column == "gpu_model":
        return [ordered(table.gpu_model), table.group_value.asc()]
    return [ordered(sums[sort.column]), table.group_value.asc(), table.gpu_model.asc()]


def gpu_hours(
    db: peewee.Database,
    *,
    cluster: str,
    group_by: GroupBy,
    days: Days,
    sort: HoursSort,
    page: Page | None,
) -> HoursPage:
    """`cluster`'s GPU-hours over `days` per group of `group_by` and GPU model: the page
    asked, or every row (`page` None)."""
    table = models.GpuHoursDaily
    first, last = days.starts()
    where = (
        (table.cluster == cluster)
        & (table.group_kind == group_by.kind)
        & (table.group_key == group_by.key)
        & (table.day >= first)
        & (table.day <= last)
    )
    sums = {
        "held_gpu_hours": peewee.fn.SUM(table.held_gpu_hours),
        "used_gpu_hours": peewee.fn.SUM(table.used_gpu_hours),
        "measured_gpu_hours": peewee.fn.SUM(table.measured_gpu_hours),
    }
    grouped = table.select(table.group_value, table.gpu_model, *sums.values()).where(where)
    query = grouped.group_by(table.group_value, table.gpu_model).order_by(*_ordering(sort, sums))
    if page is not None:
        query = query.offset(page.offset).limit(page.limit)
    with reading(db):
        found = list(database.tuple_rows(query.tuples()))
        total = table.select(table.group_value, table.gpu_model).where(where).distinct().count()
        named = workload_names(cluster, [r[0] for r in found]) if group_by.kind == WORKLOAD else {}
    rows = tuple(
        GroupHours(
            kind=group_by.kind,
            key=group_by.key,
            value=str(value),
            gpu_model=str(model),
            held_gpu_hours=float(held or 0),
            used_gpu_hours=float(used or 0),
            measured_gpu_hours=float(measured or 0),
            workload=named.get(str(value)),
        )
        for value, model, held, used, measured in found
    )
    return HoursPage(rows=rows, total=total)


def workload_names(cluster: str, uids: Iterable[str]) -> dict[str, Workload]:
    """Each uid's workload: a gpu_workloads row, else a pod without an owner (kind Pod, as
    gpu_hours_daily groups it); unknown uids are left out. In the caller's session."""
    wanted = sorted({uid for uid in uids if uid})
    found: dict[str, Workload] = {}
    workload, pod = models.GpuWorkload, models.GpuPod
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        pods = pod.select(pod.uid, pod.namespace, pod.name).where(
            (pod.cluster == cluster) & pod.uid.in_(chunk)
        )
        for uid, namespace, name in database.tuple_rows(pods.tuples()):
            found[uid] = Workload(uid=uid, kind="Pod", name=name, namespace=namespace)
        workloads = workload.select(
            workload.uid, workload.kind, workload.namespace, workload.name
        ).where((workload.cluster == cluster) & workload.uid.in_(chunk))
        for uid, kind, namespace, name in database.tuple_rows(workloads.tuples()):
            found[uid] = Workload(uid=uid, kind=kind, name=name, namespace=namespace)
    return found
