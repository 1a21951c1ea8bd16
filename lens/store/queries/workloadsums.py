"""A workload's GPU figures summed per node and bucket of a time range, which seriesworkloads.py
makes into means: a weighted total and its weight for each of FIGURES.

At minute resolution they come from gpu_minute_pods (reports/storing/podminutes.py sums each
pod's minute when it is written); the holder rows joined to the GPU rows they held and those
GPUs' devices, summed here per request, answer the rest with the same figures: the hours, the
minutes written before gpu_minute_pods existed (rollup_starts), and a node's buckets whose
sums took a GPU's VRAM size its gpu_devices row no longer has.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable
from typing import Any

import peewee

from lens.store import database, models
from lens.store.queries.reading import driver_rows
from lens.store.queries.series import Number, Tables, tables, weighted
from lens.store.queries.timerange import Resolution, TimeRange, bucket

FIGURES = ("utilization", "memory", "power")
ROLLUP = models.GpuMinutePod._meta.table_name

Key = tuple[str, int]  # node, bucket
# Per figure of FIGURES, its weighted total and its weight, as the driver gives them: a SUM of
# no known figure is None, and some engines give Decimal or int (series.mean takes them all).
Sums = list[Number | None]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Window:
    """Whose rows are read: the workload's in [since, until) of `span` (of one node only)."""

    cluster: str
    uid: str
    span: TimeRange
    since: datetime.datetime
    until: datetime.datetime
    node: str | None = None


def summed(
    db: peewee.Database, *, t: Tables, cluster: str, uid: str, span: TimeRange
) -> dict[Key, Sums]:
    """Per (node, bucket) of `span` the workload's pods' sums, read at `t`'s resolution."""
    window = _Window(cluster=cluster, uid=uid, span=span, since=span.first, until=span.last)
    if t.at != "minute":
        return _joined(db, t, window)
    start = min(max(rollup_start(cluster) or span.first, span.first), span.last)
    found = _joined(db, t, dataclasses.replace(window, until=start)) if start > span.first else {}
    if start < span.last:
        for key, sums in _rolled(db, dataclasses.replace(window, since=start)).items():
            before = found.get(key)  # the bucket the start falls in has both
            found[key] = sums if before is None else _added(before, sums)
    return found


def _added(one: Sums, other: Sums) -> Sums:
    return [float(a or 0) + float(b or 0) for a, b in zip(one, other, strict=True)]


def rollup_start(cluster: str) -> datetime.datetime | None:
    """The minute from which gpu_minute_pods holds every minute of `cluster`; None: all."""
    start = models.RollupStart
    query = start.select(peewee.fn.MAX(start.since)).where(
        (start.rollup == ROLLUP) & start.cluster.in_(["", cluster])
    )
    value = query.scalar()
    return start.since.python_value(value) if value is not None else None


def _pods(window: _Window) -> peewee.ModelSelect[Any]:
    reference = models.WorkloadPodReference
    return reference.select(reference.pod_uid).where(
        (reference.cluster == window.cluster) & (reference.workload_uid == window.uid)
    )


def _within(model: type[models.LensModel], at: str, window: _Window) -> Any:
    fields = model._meta.fields
    where = (fields["cluster"] == window.cluster) & (fields[at] >= window.since)
    where &= fields[at] < window.until
    return where if window.node is None else where & (fields["node_name"] == window.node)


def _sums(rows: Iterable[tuple[Any, ...]]) -> dict[Key, Sums]:
    """By (node, bucket), the sums as the driver gives them."""
    return {(str(node), int(number)): sums for node, number, *sums in rows}


def _joined(db: peewee.Database, t: Tables, window: _Window) -> dict[Key, Sums]:
    """The sums of the pods' holder rows joined to the GPU rows they held and their devices."""
    device = models.GpuDevice
    holder, gpu = t.holder_field, t.gpu_field
    node, weight = holder("node_name"), holder("held_seconds")
    number = bucket(db, holder(t.at), window.span)
    vram = gpu("vram_used_mean_bytes") / peewee.fn.NULLIF(device.vram_bytes, 0)
    columns = (gpu("utilization_mean_ratio"), vram, gpu("power_mean_watts"))
    same = (
        (gpu("cluster") == holder("cluster"))
        & (gpu("node_name") == holder("node_name"))
        & (gpu(t.at) == holder(t.at))
        & (gpu("gpu_uuid") == holder("gpu_uuid"))
    )
    its_device = (
        (device.cluster == holder("cluster"))
        & (device.node_name == holder("node_name"))
        & (device.uuid == holder("gpu_uuid"))
    )
    query = (
        t.holder.select(node, number, *(s for c in columns for s in weighted(c, weight)))
        .join(t.gpu, on=same)
        .join(device, peewee.JOIN.LEFT_OUTER, on=its_device)
        .where(
            _within(t.holder, t.at, window)
            & _within(t.gpu, t.at, window)  # implied by the join; bounds the GPU rows read
            & holder("pod_uid").in_(_pods(window))
        )
        .group_by(node, number)
    )
    return _sums(driver_rows(db, query))


def _vram_checked(known: peewee.Field[Any], size: peewee.Field[Any]) -> list[Any]:
    """MIN and MAX of the VRAM sizes the rows that know VRAM use took (0: none or several)."""
    taken = peewee.Case(None, ((known > 0, peewee.fn.COALESCE(size, 0)),))
    return [peewee.fn.MIN(taken), peewee.fn.MAX(taken)]


def _rolled(db: peewee.Database, window: _Window) -> dict[Key, Sums]:
    """The sums of the pods' gpu_minute_pods rows; a node's buckets whose VRAM sizes are not
    its GPUs' now are summed from the holder rows instead."""
    pods = models.GpuMinutePod
    number = bucket(db, pods.minute, window.span)
    query = (
        pods.select(
            pods.node_name,
            number,
            peewee.fn.SUM(pods.utilization_seconds),
            peewee.fn.SUM(pods.utilization_known_seconds),
            peewee.fn.SUM(pods.vram_ratio_seconds),
            peewee.fn.SUM(pods.vram_known_seconds),
            peewee.fn.SUM(pods.power_joules),
            peewee.fn.SUM(pods.power_known_seconds),
            *_vram_checked(pods.vram_known_seconds, pods.vram_bytes),
        )
        .where(_within(pods, "minute", window) & pods.pod_uid.in_(_pods(window)))
        .group_by(pods.node_name, number)
    )
    rows = driver_rows(db, query)
    sizes = vram_sizes(window.cluster, {str(row[0]) for row in rows})
    stale: dict[str, list[int]] = {}
    for node, number, *_, least, most in rows:
        if least is not None and not least == most == sizes.get(str(node)):
            stale.setdefault(str(node), []).append(int(number))
    found = _sums(row[:-2] for row in rows)
    for node, numbers in stale.items():
        found = {k: v for k, v in found.items() if k[0] != node or k[1] not in numbers}
        found.update(_joined_again(db, window, node, numbers))
    return found


def _joined_again(
    db: peewee.Database, window: _Window, node: str, numbers: list[int]
) -> dict[Key, Sums]:
    """The sums of `node`'s buckets `numbers` from the holder rows, within the window."""
    span = window.span
    since = max(window.since, _utc(span.stamp(min(numbers))))
    until = min(window.until, _utc(span.stamp(max(numbers) + 1)))
    again = dataclasses.replace(window, since=since, until=until, node=node)
    found = _joined(db, tables(Resolution.MINUTES), again)
    return {key: sums for key, sums in found.items() if key[1] in numbers}


def vram_sizes(cluster: str, nodes: set[str]) -> dict[str, int]:
    """Each node's GPUs' one VRAM size, for the nodes whose gpu_devices rows all have the same
    (neither unknown nor 0)."""
    if not nodes:
        return {}
    device = models.GpuDevice
    size = peewee.fn.NULLIF(device.vram_bytes, 0)
    query = (
        device.select(
            device.node_name,
            peewee.fn.MIN(size),
            peewee.fn.MAX(size),
            peewee.fn.COUNT(size) == peewee.fn.COUNT(peewee.SQL("*")),
        )
        .where((device.cluster == cluster) & device.node_name.in_(sorted(nodes)))
        .group_by(device.node_name)
        .tuples()
    )
    return {
        str(node): int(least)
        for node, least, most, all_sized in database.tuple_rows(query)
        if least is not None and least == most and all_sized
    }


def _utc(seconds: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)
