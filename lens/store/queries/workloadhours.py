"""GPU-seconds a workload held, per GPU model, for the API's /v1/workloads and its detail: the
seconds its containers held GPUs as the node agents saw them (docs/reports.md), a GPU shared at
once split among its holders.

A top-level workload's come from the jobs' daily sums (gpu_hours_daily, group `workload`,
lens/usage/gpuhours.py): a few rows per day, whatever its size. A workload below the top has no
such group; its own are summed from the hourly rollup of its pods (gpu_hour_holders), the same
seconds the daily sums are made of. The original multiplied each pod's request by the time since
its creation (Pending time included), from pod_resources (REFERENCE.md 2.1).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping

import peewee

from lens.store import database, models

WORKLOAD_GROUP = "workload"  # gpu_hours_daily.group_kind of a top-level workload
SECONDS_PER_HOUR = 3600.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ModelSeconds:
    """GPU-seconds held on GPUs of one model ('' when the agents' inventory did not name it)."""

    gpu_model: str
    seconds: float


Held = tuple[ModelSeconds, ...]


def _by_model(sums: Iterable[tuple[str, float]]) -> Held:
    totals: dict[str, float] = defaultdict(float)
    for model, seconds in sums:
        totals[model] += seconds
    return tuple(ModelSeconds(gpu_model=m, seconds=s) for m, s in sorted(totals.items()))


def top_level_seconds(cluster: str, uids: Iterable[str]) -> Mapping[str, Held]:
    """Each top-level workload's held GPU-seconds by model, from gpu_hours_daily; a workload
    with no row there (the agents never saw its pods hold a GPU) is absent."""
    wanted = sorted(set(uids))
    if not wanted:
        return {}
    daily = models.GpuHoursDaily
    query = (
        daily.select(daily.group_value, daily.gpu_model, peewee.fn.SUM(daily.held_gpu_hours))
        .where(
            (daily.cluster == cluster)
            & (daily.group_kind == WORKLOAD_GROUP)
            & daily.group_value.in_(wanted)
        )
        .group_by(daily.group_value, daily.gpu_model)
        .tuples()
    )
    found: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for uid, model, hours in database.tuple_rows(query):
        found[str(uid)].append((str(model), float(hours or 0.0) * SECONDS_PER_HOUR))
    return {uid: _by_model(sums) for uid, sums in found.items()}


def pods_seconds(cluster: str, workload_uid: str) -> Held | None:
    """The held GPU-seconds by model of the pods a workload references, from gpu_hour_holders;
    None when the agents never saw one of them hold a GPU."""
    held, refs = models.GpuHourHolder, models.WorkloadPodReference
    pods = refs.select(refs.pod_uid).where(
        (refs.cluster == cluster) & (refs.workload_uid == workload_uid)
    )
    query = (
        held.select(held.node_name, held.gpu_uuid, peewee.fn.SUM(held.seconds))
        .where((held.cluster == cluster) & held.pod_uid.in_(pods))
        .group_by(held.node_name, held.gpu_uuid)
        .tuples()
    )
    per_gpu = [(str(n), str(u), float(s or 0.0)) for n, u, s in database.tuple_rows(query)]
    if not per_gpu:
        return None
    named = _gpu_models(cluster, {node for node, _, _ in per_gpu})
    return _by_model((named.get((node, uuid), ""), s) for node, uuid, s in per_gpu)


def _gpu_models(cluster: str, nodes: set[str]) -> Mapping[tuple[str, str], str]:
    """Each GPU's model by (node, uuid), as lens/usage/gpuhours.py names them (gone GPUs too)."""
    devices = models.GpuDevice
    query = (
        devices.select(devices.node_name, devices.uuid, devices.gpu_model)
        .where((devices.cluster == cluster) & devices.node_name.in_(sorted(nodes)))
        .tuples()
    )
    return {(str(n), str(u)): str(m) for n, u, m in database.tuple_rows(query)}
