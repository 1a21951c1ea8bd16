"""Workloads, their GPU pods and the GPU-seconds they held, written by Lens's own writers: pods by
the controller's GpuPodRecorder, workloads by its WorkloadRecorder from the state
kube/workloads/rows.py computes of their objects and pods (as clustersync.py does), GPU-minutes
by the report store, then the hourly rollup and the jobs' daily GPU-hours (lens/usage/gpuhours.py).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence

import peewee

from lens.kube.machinery.cache import Change, ChangeType, JsonObject
from lens.kube.workloads import gpupods, rows
from lens.kube.workloads.gpupods import DEFAULT_GPU_RESOURCES
from lens.kube.workloads.podrecording import GpuPodRecorder
from lens.kube.workloads.workloadrecording import WorkloadRecorder, WorkloadWrite
from lens.reports.attribution import Attribution, Share
from lens.reports.gpuminutes import GpuMinute
from lens.reports.samples import Holder
from lens.reports.storing import hours, minutes
from lens.runtime.clock import FakeClock
from lens.store import database
from lens.usage import gpuhours
from tests.roles.api.conftest import CLUSTER, NOW, T0

NODE_MODEL = "AMD Instinct MI300X"  # the GPU model label of every node (pod_resources)


def stamp(seconds: float) -> str:
    """An RFC 3339 time `seconds` after NOW (negative: before)."""
    at = NOW + datetime.timedelta(seconds=seconds)
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def workload(
    uid: str,
    kind: str,
    *,
    name: str = "",
    namespace: str = "ml",
    owner: JsonObject | None = None,
    created: float = -4 * 3600,
    api_version: str = "kubeflow.org/v1",
    labels: dict[str, str] | None = None,
) -> JsonObject:
    """A workload object as the API server lists it, owned by `owner` when given."""
    meta: JsonObject = {
        "uid": uid,
        "name": name or f"{uid}-name",
        "namespace": namespace,
        "resourceVersion": "1",
        "creationTimestamp": stamp(created),
        "labels": labels or {},
    }
    if owner is not None:
        meta["ownerReferences"] = [_reference(owner)]
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def _reference(owner: JsonObject) -> JsonObject:
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
    }


def gpu_pod(
    uid: str,
    *,
    node: str,
    gpus: int,
    owner: JsonObject | None = None,
    namespace: str = "ml",
    created: float = -3 * 3600,
    finished: float | None = None,
    phase: str = "",
) -> JsonObject:
    """A GPU pod: Running, or Succeeded at `finished` (seconds after NOW); `phase` overrides."""
    meta: JsonObject = {
        "uid": uid,
        "name": f"pod-{uid}",
        "namespace": namespace,
        "resourceVersion": "1",
        "creationTimestamp": stamp(created),
    }
    if owner is not None:
        meta["ownerReferences"] = [_reference(owner)]
    status: JsonObject = {"phase": phase or ("Running" if finished is None else "Succeeded")}
    if finished is not None:
        status["containerStatuses"] = [
            {"name": "main", "state": {"terminated": {"finishedAt": stamp(finished)}}}
        ]
    return {
        "metadata": meta,
        "spec": {
            "nodeName": node,
            "containers": [{"name": "main", "resources": {"limits": {"amd.com/gpu": gpus}}}],
        },
        "status": status,
    }


def _under(uid: str, pod: JsonObject, objects: dict[str, JsonObject]) -> bool:
    """Whether workload `uid` is on the pod's owner chain (as OwnerTree.pods_under finds)."""
    owner = gpupods.owner_uid(pod)
    for _ in range(16):
        if not owner:
            return False
        if owner == uid:
            return True
        parent = objects.get(owner)
        owner = gpupods.owner_uid(parent) if parent is not None else ""
    return False


def write_cluster(
    db: peewee.Database,
    *,
    workloads: Sequence[JsonObject] = (),
    pods: Sequence[JsonObject] = (),
    deleted_pods: Iterable[str] = (),
    gone: Iterable[str] = (),
    cluster: str = CLUSTER,
) -> None:
    """Record the pods (those in `deleted_pods` as deleted), then each workload with the pods
    below it (those in `gone` deleted), as the controller's writer commits a batch."""
    deleted = set(deleted_pods)
    recorder = GpuPodRecorder(
        db,
        cluster=cluster,
        resources=DEFAULT_GPU_RESOURCES,
        snapshot_history=1,
        gpu_model=lambda _node: NODE_MODEL,
        wall_time=lambda: NOW,
    )
    changes = [
        Change(
            type=ChangeType.DELETED if gpupods.metadata(p)["uid"] in deleted else ChangeType.ADDED,
            object=p,
            old=None,
        )
        for p in pods
    ]
    recorder.record(changes)
    objects = {str(w["metadata"]["uid"]): w for w in workloads}
    ended = set(gone)
    writes = []
    for uid, obj in objects.items():
        below = [p for p in pods if _under(uid, p, objects)]
        live_below = [p for p in below if gpupods.metadata(p)["uid"] not in deleted]
        state = rows.state(
            obj, live_below, resources=DEFAULT_GPU_RESOURCES, gone=uid in ended, now=NOW
        )
        writes.append(WorkloadWrite(state=state, object=obj, snapshot=True))
    WorkloadRecorder(db, cluster=cluster, snapshot_history=1, wall_time=lambda: NOW).record(writes)


def _holder(pod: JsonObject) -> Holder:
    meta = gpupods.metadata(pod)
    return Holder(
        cluster="",
        namespace=str(meta["namespace"]),
        pod_name=str(meta["name"]),
        container="main",
        pod_uid=str(meta["uid"]),
        container_id=f"cid-{meta['uid']}",
    )


def write_held_minutes(
    db: peewee.Database,
    *,
    node: str,
    pod: JsonObject,
    gpu_uuids: Sequence[str],
    first: float,
    loads: Sequence[float | None],
    sharing: Sequence[JsonObject] = (),
    now: float = T0,
) -> None:
    """Minutes from `first` (epoch seconds, a minute's start), one per load, in which the pod's
    one container held each of `gpu_uuids` at that load (through the whole minute, at once with
    those of `sharing`: its seconds split among them), written as the event server writes an
    agent's batch at `now`."""
    holders = [_holder(p) for p in (pod, *sharing)]
    shares = tuple(Share(holder=h, seconds=60.0 / len(holders), held_seconds=60.0) for h in holders)
    batch = [
        GpuMinute(
            start=int(first) + 60 * i,
            uuid=uuid,
            index=int(uuid.rsplit("-", 1)[-1]),
            pci_bus_id="0000:1b:00.0",
            samples=60,
            expected_samples=60,
            utilization_mean_ratio=load,
            held_by=Attribution(shares=shares, idle_seconds=0.0),
        )
        for i, load in enumerate(loads)
        for uuid in gpu_uuids
    ]
    store = minutes.MinuteStore(db, cluster=CLUSTER, clock=FakeClock(start_time=now))
    store.write(node, batch, ())


def sum_gpu_hours(db: peewee.Database) -> None:
    """Roll the marked hours up and sum NOW's day and the one before into gpu_hours_daily."""
    hours.roll_up(db, cluster=CLUSTER, now=NOW + datetime.timedelta(hours=1))
    with database.session(db):
        named = gpuhours.gpu_models(CLUSTER)
        for day in (NOW.date() - datetime.timedelta(days=1), NOW.date()):
            groups = gpuhours.day_hours(CLUSTER, day, label_key="", gpu_models=named)
            gpuhours.save_day(CLUSTER, day, groups)
