"""Rows for the series tests, written by Lens's own writers: GPU-minutes and their holders by
the jobs' MinuteStore (reports/storing/minutes.py), their hours by its rollup (hours.py),
workloads and their pod references by the controller's WorkloadRecorder. training_performance
has no writer in Lens yet, so its rows are inserted through its model."""

from __future__ import annotations

import datetime
from collections.abc import Sequence

import peewee
from fastapi.testclient import TestClient

from lens.kube.workloads.rows import WorkloadState
from lens.kube.workloads.workloadrecording import WorkloadRecorder, WorkloadWrite
from lens.reports.attribution import Attribution, Share
from lens.reports.gpuminutes import GpuMinute
from lens.reports.samples import Holder
from lens.reports.storing import hours, minutes
from lens.roles.api.routers import params
from lens.runtime.clock import FakeClock
from lens.store import models
from tests.roles.api.conftest import CLUSTER, GIB, NOW

S = int(NOW.timestamp()) - 3600  # 04:00 UTC: the start of an hour, an hour before NOW

__all__ = ["GIB", "NOW", "S"]


def at(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def pod_uid(pod: str) -> str:
    return f"uid-{pod}"


def holder(pod: str, container: str = "main") -> Holder:
    return Holder(
        cluster="",
        namespace="ml",
        pod_name=pod,
        container=container,
        pod_uid=pod_uid(pod),
        container_id=f"cid-{pod}-{container}",
    )


def gpu_minute(
    start: int,
    index: int,
    *,
    held: Sequence[tuple[str, float]] = (),
    temperatures: Sequence[tuple[str, float]] = (),
    **figures: object,
) -> GpuMinute:
    """GPU `GPU-<index>` over the minute at `start`; `held` are (pod, seconds) each held it,
    alone, the rest of the minute idle; `figures` the minute's means (None unless given)."""
    shares = tuple(Share(holder=holder(p), held_seconds=s, seconds=s) for p, s in held)
    return GpuMinute(
        start=start,
        uuid=f"GPU-{index}",
        index=index,
        pci_bus_id=f"0000:{index + 0x10:02x}:00.0",
        samples=60,
        expected_samples=60,
        temperatures_max_celsius=tuple(temperatures),
        held_by=Attribution(shares=shares, idle_seconds=60.0 - sum(s for _, s in held)),
        **figures,  # type: ignore[arg-type]  # checked by the dataclass at run time
    )


def write_minutes(db: peewee.Database, node: str, gpus: Sequence[GpuMinute]) -> None:
    """One node's minutes as `lens jobs` writes an agent's report (partitions, then rows)."""
    store = minutes.MinuteStore(db, cluster=CLUSTER, clock=FakeClock(start_time=NOW.timestamp()))
    prepared = store.prepare(node, gpus, ())
    store.before_write(prepared)
    store.write_prepared(prepared)


def roll_up(db: peewee.Database) -> None:
    """The rollup of every hour marked, the current one too, as the jobs' loop runs it."""
    result = hours.roll_up(db, cluster=CLUSTER, now=NOW)
    assert result.complete


def write_workload(
    db: peewee.Database, uid: str, pods: Sequence[str], *, parent_uid: str = ""
) -> None:
    """A running workload over the GPU pods `pods` (by name), with their references."""
    state = WorkloadState(
        uid=uid,
        group_version="kubeflow.org/v1",
        kind="PyTorchJob",
        namespace="ml",
        name=f"job-{uid}",
        parent_uid=parent_uid,
        labels={},
        status="Running",
        status_reason="",
        gpu_request=len(pods),
        request_is_live=True,
        created_at=NOW - datetime.timedelta(hours=2),
        end_at=None,
        deleted_at=None,
        pod_uids=tuple(pod_uid(p) for p in pods),
    )
    obj = {"kind": state.kind, "metadata": {"uid": uid, "resourceVersion": "1"}}
    recorder = WorkloadRecorder(db, cluster=CLUSTER, snapshot_history=1, wall_time=lambda: NOW)
    recorder.record([WorkloadWrite(state=state, object=obj, snapshot=False)])


def write_training(
    db: peewee.Database, uid: str, rows: Sequence[tuple[float, int, dict[str, object]]]
) -> None:
    """training_performance rows of workload `uid`: (time, iteration, performance), in order."""
    for time, iteration, performance in rows:
        models.TrainingPerformance.insert(
            cluster=CLUSTER,
            workload_uid=uid,
            iteration=iteration,
            performance=performance,
            created_at=at(time),
        ).execute()


def at_wall_time(client: TestClient, now: datetime.datetime) -> None:
    """Make the app's `now` (the latest complete minute's reference) `now`."""
    client.app.dependency_overrides[params.now] = lambda: now  # type: ignore[attr-defined]
