"""GPU-hours per day: how many GPU-hours each namespace, top-level workload and team held, and
how many of them it used, by GPU model — from the hourly rollup of the device reports.

Held (allocated) GPU-hours are the seconds containers held GPUs as the node agents saw them
(gpu_hour_holders.seconds, a shared GPU's seconds split among its holders); used GPU-hours are
those seconds weighted by the utilization of each minute (used_seconds), and measured GPU-hours
the held ones whose utilization was known, so a reader can tell "idle" from "unknown". A team is
the value of a configured label on the pod's top-level workload ('' when it has none).
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections import defaultdict

import peewee

from lens.store import database, models, upserting
from lens.usage import workloads

DAY = datetime.timedelta(days=1)
SECONDS_PER_HOUR = 3600.0
NAMESPACE, WORKLOAD, LABEL = "namespace", "workload", "label"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GroupHours:
    """One group's GPU-hours of one day on one GPU model."""

    kind: str  # namespace, workload or label
    key: str  # the label's key for kind label; '' else
    value: str  # the namespace, the workload's uid, or the label's value
    gpu_model: str  # '' when the GPU's model is not known
    held_hours: float
    used_hours: float
    measured_hours: float


@dataclasses.dataclass(slots=True)
class _Sums:
    held: float = 0.0
    used: float = 0.0
    measured: float = 0.0

    def add(self, held: float, used: float, measured: float) -> None:
        self.held += held
        self.used += used
        self.measured += measured


def day_hours(
    cluster: str,
    day: datetime.date,
    *,
    label_key: str,
    gpu_models: dict[tuple[str, str], str],
) -> list[GroupHours]:
    """Every group's GPU-hours on UTC `day`; with `label_key` '' no team grouping.
    `gpu_models`: each (node, GPU uuid)'s model (`gpu_models`), read once for several days."""
    start = datetime.datetime.combine(day, datetime.time(), tzinfo=datetime.UTC)
    held = models.GpuHourHolder
    query = (
        held.select(
            held.node_name,
            held.gpu_uuid,
            held.pod_uid,
            held.namespace,
            peewee.fn.SUM(held.seconds),
            peewee.fn.SUM(held.used_seconds),
            peewee.fn.SUM(held.measured_seconds),
        )
        .where((held.cluster == cluster) & (held.hour >= start) & (held.hour < start + DAY))
        .group_by(held.node_name, held.gpu_uuid, held.pod_uid, held.namespace)
        .tuples()
    )
    rows = list(database.tuple_rows(query))
    tops = workloads.top_workloads(cluster, {pod for _, _, pod, *_ in rows if pod})
    teams = _labels(cluster, set(tops.values()), label_key) if label_key else {}
    sums: dict[tuple[str, str, str, str], _Sums] = defaultdict(_Sums)
    for node, uuid, pod, namespace, seconds, used, measured in rows:
        model = gpu_models.get((node, uuid), "")
        figures = (float(seconds or 0), float(used or 0), float(measured or 0))
        sums[NAMESPACE, "", namespace, model].add(*figures)
        top = tops.get(pod, "") or pod
        if top:
            sums[WORKLOAD, "", top, model].add(*figures)
        if label_key:
            sums[LABEL, label_key, teams.get(tops.get(pod, ""), ""), model].add(*figures)
    return [
        GroupHours(
            kind=kind,
            key=key,
            value=value,
            gpu_model=model,
            held_hours=s.held / SECONDS_PER_HOUR,
            used_hours=s.used / SECONDS_PER_HOUR,
            measured_hours=s.measured / SECONDS_PER_HOUR,
        )
        for (kind, key, value, model), s in sorted(sums.items())
    ]


def save_day(cluster: str, day: datetime.date, groups: list[GroupHours]) -> int:
    """Make the stored GPU-hours of `day` equal `groups`, in one transaction, writing only the
    rows that changed (a day summed again with nothing new writes nothing); returns how many
    rows were inserted, updated or deleted."""
    table = models.GpuHoursDaily
    start = datetime.datetime.combine(day, datetime.time(), tzinfo=datetime.UTC)

    def write() -> int:
        stored = _stored_day(cluster, start)
        wanted = {(g.kind, g.key, g.value, g.gpu_model): g for g in groups}
        changed = [g for k, g in wanted.items() if not _same(stored.get(k), g)]
        gone = [k for k in stored if k not in wanted]
        for kind, key, value, model in gone:
            table.delete().where(
                (table.cluster == cluster)
                & (table.day == start)
                & (table.group_kind == kind)
                & (table.group_key == key)
                & (table.group_value == value)
                & (table.gpu_model == model)
            ).execute()
        upserting.upsert(table, [_row(cluster, start, g) for g in changed])
        return len(changed) + len(gone)

    # It reads the stored day before writing: the write lock first (store/database.py).
    return database.idempotent_transaction(table._meta.database, write, lock_first=True)


_Figures = tuple[float, float, float]


def _stored_day(
    cluster: str, start: datetime.datetime
) -> dict[tuple[str, str, str, str], _Figures]:
    table = models.GpuHoursDaily
    query = (
        table.select(
            table.group_kind,
            table.group_key,
            table.group_value,
            table.gpu_model,
            table.held_gpu_hours,
            table.used_gpu_hours,
            table.measured_gpu_hours,
        )
        .where((table.cluster == cluster) & (table.day == start))
        .tuples()
    )
    return {
        (kind, key, value, model): (held, used, measured)
        for kind, key, value, model, held, used, measured in database.tuple_rows(query)
    }


def _same(stored: _Figures | None, group: GroupHours) -> bool:
    """Equal up to the last bits a sum in another order may change."""
    if stored is None:
        return False
    fresh = (group.held_hours, group.used_hours, group.measured_hours)
    return all(
        math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(stored, fresh, strict=True)
    )


def _row(cluster: str, start: datetime.datetime, group: GroupHours) -> upserting.Row:
    return {
        "cluster": cluster,
        "day": start,
        "group_kind": group.kind,
        "group_key": group.key,
        "group_value": group.value,
        "gpu_model": group.gpu_model,
        "held_gpu_hours": group.held_hours,
        "used_gpu_hours": group.used_hours,
        "measured_gpu_hours": group.measured_hours,
        "updated_at": datetime.datetime.now(datetime.UTC),
    }


def gpu_models(cluster: str) -> dict[tuple[str, str], str]:
    """Each GPU's model by (node, uuid), from the agents' inventories (gpu_devices)."""
    devices = models.GpuDevice
    query = devices.select(devices.node_name, devices.uuid, devices.gpu_model).where(
        devices.cluster == cluster
    )
    return {(node, uuid): model for node, uuid, model in database.tuple_rows(query.tuples())}


def _labels(cluster: str, workload_uids: set[str], key: str) -> dict[str, str]:
    table = models.GpuWorkload
    uids = sorted(uid for uid in workload_uids if uid)
    if not uids:
        return {}
    query = table.select(table.uid, table.labels).where(
        (table.cluster == cluster) & table.uid.in_(uids)
    )
    found = {}
    for uid, labels in database.tuple_rows(query.tuples()):
        value = labels.get(key) if isinstance(labels, dict) else None
        found[uid] = value if isinstance(value, str) else ""
    return found
