"""GPU consumers: per top-level workload, the GPUs its running pods hold, how many pods, and how
busy those GPUs really were — from the controller's tables and the device report minutes.

The original (REFERENCE.md 5.2) counted a pod once per GPU container, gave every pod its node's
average utilization, reported percent of percent, skipped pods without owners and walked owners
with a GET each. Here a pod counts once with its GPU request; utilization is the mean of the
GPU-minutes its own pods held over the last minutes, weighted by the seconds held; a pod without
an owner is a consumer of its own (kind Pod); the hierarchy comes from gpu_workloads.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections import defaultdict

import peewee

from lens.store import database, models
from lens.usage import tables, workloads


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Consumer:
    kind: str
    name: str
    namespace: str
    uid: str
    gpus_allocated: int
    active_pods: int
    utilization_ratio: float | None  # None: no minute of its pods' GPUs known yet


@dataclasses.dataclass(frozen=True, slots=True)
class _Pod:
    uid: str
    name: str
    namespace: str
    gpus: int
    top: str  # the top-level workload's uid; '' when it has no owner


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerPods:
    """A consumer before its utilization is read: its workload and running GPU pods."""

    kind: str
    name: str
    namespace: str
    uid: str
    pods: tuple[_Pod, ...]

    @property
    def gpus_allocated(self) -> int:
        return sum(p.gpus for p in self.pods)


def consumers(cluster: str, *, since: datetime.datetime) -> list[Consumer]:
    """Every consumer of the cluster's running GPU pods; utilization over minutes from `since`."""
    return with_utilization(cluster, consumer_pods(cluster), since=since)


def consumer_pods(cluster: str) -> list[ConsumerPods]:
    """Every consumer of the cluster's running GPU pods, by uid, without utilization (cheap:
    a page of them may then be read in full with `with_utilization`)."""
    pods = _running_pods(cluster)
    named = _workloads(cluster, {p.top for p in pods if p.top})
    grouped: dict[str, list[_Pod]] = defaultdict(list)
    for pod in pods:
        grouped[pod.top or pod.uid].append(pod)
    found = []
    for uid, members in sorted(grouped.items()):
        kind, name, namespace = named.get(uid) or ("Pod", members[0].name, members[0].namespace)
        found.append(
            ConsumerPods(kind=kind, name=name, namespace=namespace, uid=uid, pods=tuple(members))
        )
    return found


def with_utilization(
    cluster: str, groups: list[ConsumerPods], *, since: datetime.datetime
) -> list[Consumer]:
    """`groups` with the utilization of their pods' GPU-minutes from `since`, in their order."""
    uids = [p.uid for group in groups for p in group.pods]
    busy = _utilization(cluster, uids, since) if uids else {}
    found = []
    for group in groups:
        weighted = [busy[p.uid] for p in group.pods if p.uid in busy]
        seconds = sum(held for _, held in weighted)
        found.append(
            Consumer(
                kind=group.kind,
                name=group.name,
                namespace=group.namespace,
                uid=group.uid,
                gpus_allocated=group.gpus_allocated,
                active_pods=len(group.pods),
                utilization_ratio=sum(u * h for u, h in weighted) / seconds if seconds else None,
            )
        )
    return found


def _running_pods(cluster: str) -> list[_Pod]:
    table = models.GpuPod
    rows = list(
        database.tuple_rows(
            table.select(table.uid, table.name, table.namespace, table.gpu_allocated)
            .where(
                (table.cluster == cluster)
                & (table.running == True)  # noqa: E712
                & (table.deleted == False)  # noqa: E712
                & (table.gpu_allocated > 0)
            )
            .tuples()
        )
    )
    tops = workloads.top_workloads(cluster, [uid for uid, *_ in rows])
    return [
        _Pod(uid, name, namespace, gpus, tops.get(uid, "")) for uid, name, namespace, gpus in rows
    ]


def _utilization(
    cluster: str, pod_uids: list[str], since: datetime.datetime
) -> dict[str, tuple[float, float]]:
    """Per pod: the mean utilization of the GPU-minutes it held since `since`, weighted by the
    seconds held, and those seconds."""
    held, gpu = tables.HELD, tables.GPU
    query = (
        tables.held_with_gpu_minute(
            held.select(
                held.pod_uid,
                peewee.fn.SUM(gpu.utilization_mean_ratio * held.held_seconds),
                peewee.fn.SUM(held.held_seconds),
            )
        )
        .where(
            (held.cluster == cluster)
            & held.pod_uid.in_(pod_uids)
            & (held.minute >= since)
            & (gpu.minute >= since)  # implied by the join; bounds the GPU-minutes read too
            & gpu.utilization_mean_ratio.is_null(False)
        )
        .group_by(held.pod_uid)
        .tuples()
    )
    return {
        uid: (float(total) / float(seconds), float(seconds))
        for uid, total, seconds in database.tuple_rows(query)
        if seconds
    }


def _workloads(cluster: str, uids: set[str]) -> dict[str, tuple[str, str, str]]:
    table = models.GpuWorkload
    if not uids:
        return {}
    query = (
        table.select(table.uid, table.kind, table.name, table.namespace)
        .where((table.cluster == cluster) & table.uid.in_(sorted(uids)))
        .tuples()
    )
    return {
        uid: (kind, name, namespace) for uid, kind, name, namespace in database.tuple_rows(query)
    }
