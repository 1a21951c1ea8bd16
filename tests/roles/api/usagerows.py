"""Rows for the usage routes (/v1/gpus, /v1/idle, /v1/gpuHours) written by Lens's own writers:
pods and workloads by the controller's recorders (kube/workloads/), GPU-minutes and their
holders by the report store (reports/storing/minutes.py) and its hourly rollup (hours.py),
idle intervals and daily GPU-hours by lens/usage's job bodies."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence

import peewee

from lens.kube.machinery.cache import Change, ChangeType
from lens.kube.workloads import rows
from lens.kube.workloads.gpupods import DEFAULT_GPU_RESOURCES
from lens.kube.workloads.podrecording import GpuPodRecorder
from lens.kube.workloads.workloadrecording import WorkloadRecorder, WorkloadWrite
from lens.reports.attribution import Attribution, Share
from lens.reports.gpuminutes import GpuMinute
from lens.reports.samples import Holder
from lens.reports.storing import hours, minutes
from lens.runtime.clock import FakeClock
from lens.store import database, freshness
from lens.usage import gpuhours, idlestore, workloads
from lens.usage.idle import IdleInterval, IdleTracker
from tests.roles.api.conftest import CLUSTER, NOW, gpu, node, write_gpus, write_nodes

JsonObject = dict[str, object]


def at(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def owner_of(obj: JsonObject) -> dict[str, object]:
    meta = obj["metadata"]
    assert isinstance(meta, dict)
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
    }


def workload(
    uid: str,
    *,
    kind: str = "PyTorchJob",
    name: str = "",
    namespace: str = "ml",
    labels: dict[str, str] | None = None,
    owner: JsonObject | None = None,
) -> JsonObject:
    """A workload object as the API server lists it, owned by `owner` when given."""
    meta: dict[str, object] = {
        "uid": uid,
        "name": name or f"w-{uid}",
        "namespace": namespace,
        "resourceVersion": "1",
        "creationTimestamp": "2026-11-21T01:00:00Z",
        "labels": labels or {},
    }
    if owner is not None:
        meta["ownerReferences"] = [owner_of(owner)]
    return {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": meta}


def pod(
    uid: str,
    *,
    node_name: str = "gpu-a",
    namespace: str = "ml",
    gpus: int = 1,
    owner: JsonObject | None = None,
) -> JsonObject:
    """A running GPU pod named pod-<uid>, owned by `owner` when given."""
    meta: dict[str, object] = {
        "uid": uid,
        "name": f"pod-{uid}",
        "namespace": namespace,
        "resourceVersion": "1",
        "creationTimestamp": "2026-11-21T01:00:00Z",
    }
    if owner is not None:
        meta["ownerReferences"] = [owner_of(owner)]
    return {
        "metadata": meta,
        "spec": {
            "nodeName": node_name,
            "containers": [{"name": "main", "resources": {"limits": {"amd.com/gpu": gpus}}}],
        },
        "status": {"phase": "Running"},
    }


def record_pods(db: peewee.Database, *pods: JsonObject) -> None:
    recorder = GpuPodRecorder(
        db,
        cluster=CLUSTER,
        resources=DEFAULT_GPU_RESOURCES,
        snapshot_history=1,
        gpu_model=lambda _node: "AMD Instinct MI300X",
        wall_time=lambda: NOW,
    )
    recorder.record([Change(type=ChangeType.ADDED, object=p, old=None) for p in pods])


def record_workloads(db: peewee.Database, *levels: tuple[JsonObject, Sequence[JsonObject]]) -> None:
    """Each (workload, the GPU pods anywhere beneath it), as the controller's sync writes them."""
    writes = [
        WorkloadWrite(
            state=rows.state(obj, list(pods), resources=DEFAULT_GPU_RESOURCES, gone=False, now=NOW),
            object=obj,
            snapshot=False,
        )
        for obj, pods in levels
    ]
    WorkloadRecorder(db, cluster=CLUSTER, snapshot_history=1, wall_time=lambda: NOW).record(writes)


def holder(pod_object: JsonObject, container: str = "main") -> Holder:
    """The container `container` of a pod object, as the agent's container tracking names it."""
    meta = pod_object["metadata"]
    assert isinstance(meta, dict)
    return Holder(
        cluster="",
        namespace=str(meta["namespace"]),
        pod_name=str(meta["name"]),
        container=container,
        pod_uid=str(meta["uid"]),
        container_id=f"cid-{meta['uid']}-{container}",
    )


def gpu_minute(
    start: float,
    uuid: str,
    *,
    held: Iterable[tuple[Holder, float, float]] = (),
    **figures: object,
) -> GpuMinute:
    """A GPU-minute; `held` are (holder, seconds, held seconds), the rest of the minute idle."""
    shares = tuple(Share(holder=h, seconds=s, held_seconds=hs) for h, s, hs in held)
    values: dict[str, object] = {
        "index": int(uuid.rsplit("-", 1)[-1]),
        "pci_bus_id": "0000:1b:00.0",
        "samples": 60,
        "expected_samples": 60,
        **figures,
    }
    return GpuMinute(
        start=int(start),
        uuid=uuid,
        held_by=Attribution(shares=shares, idle_seconds=60.0 - sum(s.seconds for s in shares)),
        **values,  # type: ignore[arg-type]  # checked by the dataclass at run time
    )


def write_minutes(
    db: peewee.Database, node_name: str, gpu: Sequence[GpuMinute], *, now: float
) -> None:
    """One node's GPU-minutes, as the event server writes them (store clock at `now`)."""
    store = minutes.MinuteStore(db, cluster=CLUSTER, clock=FakeClock(start_time=now))
    prepared = store.prepare(node_name, gpu, ())
    store.before_write(prepared)
    store.write_prepared(prepared)


def find_idle(
    db: peewee.Database,
    *,
    since: datetime.datetime,
    until: datetime.datetime,
    floor: float = 0.05,
    window_minutes: int = 3,
) -> list[IdleInterval]:
    """One run of the idle-gpus job body over the held minutes of [since, until): the
    intervals it wrote (open when they last until `until`)."""
    tracker = IdleTracker(floor=floor, window_minutes=window_minutes)
    with database.session(db):
        changed = tracker.feed(
            idlestore.held_minutes(CLUSTER, since=since, until=until), through=until
        )
        tops = workloads.top_workloads(CLUSTER, {i.holding.pod_uid for i in changed})
        idlestore.save(CLUSTER, changed, tops)
    return changed


def sum_days(
    db: peewee.Database,
    days: Iterable[datetime.date],
    *,
    now: datetime.datetime,
    label_key: str = "team",
) -> None:
    """Roll the minutes up into hours, then sum `days` into gpu_hours_daily, as the jobs do,
    saying the sums are as of `now` (every minute written is in them)."""
    hours.roll_up(db, cluster=CLUSTER, now=now)
    with database.session(db):
        models = gpuhours.gpu_models(CLUSTER)
        for day in days:
            groups = gpuhours.day_hours(CLUSTER, day, label_key=label_key, gpu_models=models)
            gpuhours.save_day(CLUSTER, day, groups)
    freshness.record(
        db, cluster=CLUSTER, figure=freshness.GPU_HOURS, as_of=now, interval_seconds=60
    )


# --- the scenarios the tests of the three routes and their queries share -------------------

GIB = 2**30
MINUTE = 60


def _people(db: peewee.Database) -> dict[str, JsonObject]:
    """Pod p1 of PyTorchJob train (w1, ml, team nlp); p2 of ReplicaSet web-1 (r1) of
    Deployment web (d1, serve, team ops); p3 without an owner (dev)."""
    job = workload("w1", name="train", labels={"team": "nlp"})
    deploy = workload(
        "d1", kind="Deployment", name="web", namespace="serve", labels={"team": "ops"}
    )
    replicas = workload("r1", kind="ReplicaSet", name="web-1", namespace="serve", owner=deploy)
    p1 = pod("p1", owner=job)
    p2 = pod("p2", node_name="gpu-b", namespace="serve", owner=replicas)
    p3 = pod("p3", namespace="dev")
    record_pods(db, p1, p2, p3)
    record_workloads(db, (job, [p1]), (deploy, [p2]), (replicas, [p2]))
    return {"p1": p1, "p2": p2, "p3": p3}


def gpu_cluster(db: peewee.Database, *, now: float) -> float:
    """/v1/gpus' cluster as of `now`; returns the start of the latest fresh minute, LATEST.

    gpu-a: GPU-0 held by p1 (minutes LATEST-60 at 10 % and LATEST at 50 %, 10 GiB used, 300 W,
    edge 50 °C, junction 70 °C); GPU-1 shared in LATEST by p2 (held 60 s) and p3 (45 s) at 0 %;
    GPU-2's last minute 10 minutes before LATEST (stale). gpu-b (MI325X, 256 GiB): GPU-0 free
    in LATEST, utilization unknown, and a minute 4 minutes after it (after `now`: ignored).
    agent-only (no node row): GPU-0, no minute. gone (node Deleted): GPU-0, left out."""
    write_nodes(
        db,
        node("gpu-a", gpu_count=3),
        node("gpu-b", gpu_name="AMD Instinct MI325X", gpu_count=1),
        node("gone", status="Deleted"),
    )
    write_gpus(db, "gpu-a", (gpu(0), gpu(1), gpu(2)), time=now)
    write_gpus(db, "gpu-b", (gpu(0, model="MI325X", vram_bytes=256 * GIB),), time=now)
    write_gpus(db, "gone", (gpu(0),), time=now)
    write_gpus(db, "agent-only", (gpu(0),), time=now)
    pods = _people(db)
    p1, p2, p3 = holder(pods["p1"]), holder(pods["p2"]), holder(pods["p3"])
    latest = now // MINUTE * MINUTE - 2 * MINUTE
    temperatures = (("edge", 50.0), ("junction", 70.0))
    gpu_a = [
        gpu_minute(latest - MINUTE, "GPU-0", held=[(p1, 60, 60)], utilization_mean_ratio=0.1),
        gpu_minute(
            latest,
            "GPU-0",
            held=[(p1, 60, 60)],
            utilization_mean_ratio=0.5,
            vram_used_mean_bytes=10.0 * GIB,
            power_mean_watts=300.0,
            temperatures_max_celsius=temperatures,
        ),
        gpu_minute(
            latest, "GPU-1", held=[(p2, 37.5, 60), (p3, 22.5, 45)], utilization_mean_ratio=0.0
        ),
        gpu_minute(latest - 10 * MINUTE, "GPU-2", held=[(p1, 60, 60)], utilization_mean_ratio=0.9),
    ]
    write_minutes(db, "gpu-a", gpu_a, now=now)
    ahead = gpu_minute(latest + 4 * MINUTE, "GPU-0", utilization_mean_ratio=0.99)
    write_minutes(db, "gpu-b", [gpu_minute(latest, "GPU-0"), ahead], now=now)
    write_minutes(db, "gone", [gpu_minute(latest, "GPU-0", utilization_mean_ratio=1.0)], now=now)
    return latest


def idle_cluster(db: peewee.Database, base: float) -> None:
    """Idle intervals found by the job body (floor 5 %, window 3 minutes) in minutes
    [base, base + 10 min), the run ending at base + 10 min:

    A: p1 on gpu-a GPU-0 [base, +5 min) at 1 %, ended by minute 5 at 50 %;
    B: p1 on gpu-a GPU-0 [+6, +10 min) at 2 %, open;
    C: p2 on gpu-a GPU-1 [base, +10 min) at 0 %, open;
    D: p3 on gpu-c GPU-3 (no inventory) [+2, +6 min) at 3 %, ended (no minute after)."""
    write_gpus(db, "gpu-a", (gpu(0), gpu(1)), time=base)
    pods = _people(db)
    p1, p2, p3 = holder(pods["p1"]), holder(pods["p2"]), holder(pods["p3"])
    loads = [0.01] * 5 + [0.5] + [0.02] * 4
    gpu_a = [
        gpu_minute(base + MINUTE * i, "GPU-0", held=[(p1, 60, 60)], utilization_mean_ratio=load)
        for i, load in enumerate(loads)
    ] + [
        gpu_minute(base + MINUTE * i, "GPU-1", held=[(p2, 60, 60)], utilization_mean_ratio=0.0)
        for i in range(10)
    ]
    write_minutes(db, "gpu-a", gpu_a, now=base + 11 * MINUTE)
    gpu_c = [
        gpu_minute(base + MINUTE * i, "GPU-3", held=[(p3, 60, 60)], utilization_mean_ratio=0.03)
        for i in range(2, 6)
    ]
    write_minutes(db, "gpu-c", gpu_c, now=base + 11 * MINUTE)
    find_idle(db, since=at(base), until=at(base + 10 * MINUTE))


def hours_cluster(db: peewee.Database, day: datetime.date) -> None:
    """GPU-hours of `day` and the next, summed by the jobs' body (team label `team`):

    day: p1 on gpu-a GPU-0 (MI300X) 6 minutes at 50 %; p2 on gpu-b GPU-0 (model
    `MI325X, "OAM"`) 3 minutes at 100 %; p3 on gpu-c GPU-3 (model unknown) 6 minutes at 0 %.
    next day: p1 on gpu-a GPU-0 3 minutes, utilization unknown; p3 on gpu-a GPU-1 12 minutes
    at 25 %. Each minute from 05:00 UTC."""
    first = datetime.datetime.combine(day, datetime.time(5), tzinfo=datetime.UTC).timestamp()
    second = first + 86_400
    write_gpus(db, "gpu-a", (gpu(0), gpu(1)), time=first)
    write_gpus(db, "gpu-b", (gpu(0, model='MI325X, "OAM"'),), time=first)
    pods = _people(db)
    p1, p2, p3 = holder(pods["p1"]), holder(pods["p2"]), holder(pods["p3"])

    def held(
        start: float, count: int, uuid: str, who: Holder, load: float | None
    ) -> list[GpuMinute]:
        return [
            gpu_minute(start + MINUTE * i, uuid, held=[(who, 60, 60)], utilization_mean_ratio=load)
            for i in range(count)
        ]

    write_minutes(db, "gpu-a", held(first, 6, "GPU-0", p1, 0.5), now=first + 3600)
    write_minutes(db, "gpu-b", held(first, 3, "GPU-0", p2, 1.0), now=first + 3600)
    write_minutes(db, "gpu-c", held(first, 6, "GPU-3", p3, 0.0), now=first + 3600)
    later = held(second, 3, "GPU-0", p1, None) + held(second, 12, "GPU-1", p3, 0.25)
    write_minutes(db, "gpu-a", later, now=second + 3600)
    sum_days(db, (day, day + datetime.timedelta(days=1)), now=at(second + 3600))
