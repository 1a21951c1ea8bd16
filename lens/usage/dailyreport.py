"""The daily GPU-hours report: one UTC day of gpu_hours_daily as CSV rows a person reads —
workloads named, not only by uid — and the day's totals for the log line that announces it."""

from __future__ import annotations

import csv
import dataclasses
import datetime
import io
from collections.abc import Iterable, Sequence

from lens.store import database, models
from lens.usage.gpuhours import NAMESPACE, WORKLOAD

COLUMNS = (
    "day",
    "group_kind",
    "group_key",
    "group_value",
    "workload_kind",
    "workload_namespace",
    "workload_name",
    "gpu_model",
    "held_gpu_hours",
    "used_gpu_hours",
    "measured_gpu_hours",
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReportRow:
    day: datetime.date
    group_kind: str  # namespace, workload or label
    group_key: str  # the label's key for kind label
    group_value: str  # the namespace, the top-level workload's uid, or the label's value
    workload_kind: str  # for kind workload: its kind, namespace and name ('' unknown)
    workload_namespace: str
    workload_name: str
    gpu_model: str
    held_gpu_hours: float
    used_gpu_hours: float
    measured_gpu_hours: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DayTotals:
    held_gpu_hours: float
    used_gpu_hours: float
    namespaces: int
    workloads: int


def report_rows(cluster: str, day: datetime.date) -> list[ReportRow]:
    """Every row of `day` (UTC) in gpu_hours_daily, by group kind, group and GPU model."""
    table = models.GpuHoursDaily
    start = datetime.datetime.combine(day, datetime.time(), tzinfo=datetime.UTC)
    stored = list(
        table.select()
        .where((table.cluster == cluster) & (table.day == start))
        .order_by(table.group_kind, table.group_key, table.group_value, table.gpu_model)
    )
    names = _workload_names(cluster, {r.group_value for r in stored if r.group_kind == WORKLOAD})
    rows = []
    for r in stored:
        kind, namespace, name = (
            names.get(r.group_value, ("", "", "")) if r.group_kind == WORKLOAD else ("", "", "")
        )
        rows.append(
            ReportRow(
                day=day,
                group_kind=r.group_kind,
                group_key=r.group_key,
                group_value=r.group_value,
                workload_kind=kind,
                workload_namespace=namespace,
                workload_name=name,
                gpu_model=r.gpu_model,
                held_gpu_hours=r.held_gpu_hours,
                used_gpu_hours=r.used_gpu_hours,
                measured_gpu_hours=r.measured_gpu_hours,
            )
        )
    return rows


def _workload_names(cluster: str, uids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
    """(kind, namespace, name) of each top-level workload uid, or of the pod without owner."""
    wanted = sorted(set(uids))
    found: dict[str, tuple[str, str, str]] = {}
    workload, pod = models.GpuWorkload, models.GpuPod
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        pods = pod.select(pod.uid, pod.namespace, pod.name).where(
            (pod.cluster == cluster) & pod.uid.in_(chunk)
        )
        for uid, namespace, name in database.tuple_rows(pods.tuples()):
            found[uid] = ("Pod", namespace, name)
        workloads = workload.select(
            workload.uid, workload.kind, workload.namespace, workload.name
        ).where((workload.cluster == cluster) & workload.uid.in_(chunk))
        for uid, kind, namespace, name in database.tuple_rows(workloads.tuples()):
            found[uid] = (kind, namespace, name)
    return found


def totals(rows: Sequence[ReportRow]) -> DayTotals:
    """The day's GPU-hours: the namespace rows count each GPU-second once."""
    by_namespace = [r for r in rows if r.group_kind == NAMESPACE]
    return DayTotals(
        held_gpu_hours=sum(r.held_gpu_hours for r in by_namespace),
        used_gpu_hours=sum(r.used_gpu_hours for r in by_namespace),
        namespaces=len({r.group_value for r in by_namespace}),
        workloads=len({r.group_value for r in rows if r.group_kind == WORKLOAD}),
    )


def render_csv(rows: Sequence[ReportRow]) -> str:
    """RFC 4180 CSV with a header; hours with six decimals (a GPU-second is 0.000278)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for r in rows:
        writer.writerow(
            (
                r.day.isoformat(),
                r.group_kind,
                r.group_key,
                r.group_value,
                r.workload_kind,
                r.workload_namespace,
                r.workload_name,
                r.gpu_model,
                f"{r.held_gpu_hours:.6f}",
                f"{r.used_gpu_hours:.6f}",
                f"{r.measured_gpu_hours:.6f}",
            )
        )
    return out.getvalue()
