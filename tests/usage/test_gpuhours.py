"""GPU-hours of a day per namespace, top-level workload and team, by GPU model: held, used and
measured, from the hourly holder rows."""

from __future__ import annotations

import datetime

import peewee
import pytest

from lens.store import models
from lens.usage import gpuhours
from lens.usage.gpuhours import LABEL, NAMESPACE, WORKLOAD, GroupHours
from tests.conftest import others_may_write, write_lock_seen

CLUSTER = "c1"
DAY = datetime.date(2026, 11, 23)
MIDNIGHT = datetime.datetime(2026, 11, 23, tzinfo=datetime.UTC)


def _hour(
    hour: int, *, pod: str, namespace: str, gpu: str, seconds: float, used: float, measured: float
) -> None:
    models.GpuHourHolder.create(
        cluster=CLUSTER,
        node_name="n1",
        gpu_uuid=gpu,
        hour=MIDNIGHT + datetime.timedelta(hours=hour),
        container_id=f"cid-{pod}",
        namespace=namespace,
        pod_name=pod,
        pod_uid=f"uid-{pod}",
        container_name="main",
        minutes=60,
        seconds=seconds,
        held_seconds=seconds,
        measured_seconds=measured,
        used_seconds=used,
    )


def _cluster_state() -> None:
    for uuid, model in (("GPU-0", "MI300X"), ("GPU-1", "MI300X"), ("GPU-2", "MI325X")):
        models.GpuDevice.create(
            cluster=CLUSTER, node_name="n1", uuid=uuid, gpu_id=0, gpu_model=model
        )
    models.GpuWorkload.create(
        cluster=CLUSTER, kind="PyTorchJob", name="llm", uid="w-llm", labels={"team": "nlp"}
    )
    models.GpuWorkload.create(cluster=CLUSTER, kind="Job", name="etl", uid="w-etl", labels={})
    for pod, owner in (("llm-0", "w-llm"), ("llm-1", "w-llm"), ("etl-0", "w-etl")):
        models.GpuPod.create(
            cluster=CLUSTER, namespace="ml", name=pod, uid=f"uid-{pod}", owner_uid=owner
        )


def test_a_days_hours_are_summed_per_namespace_workload_and_team_by_model(
    db: peewee.Database,
) -> None:
    _cluster_state()
    _hour(0, pod="llm-0", namespace="ml", gpu="GPU-0", seconds=3600, used=1800, measured=3600)
    _hour(1, pod="llm-0", namespace="ml", gpu="GPU-0", seconds=1800, used=0, measured=900)
    _hour(0, pod="llm-1", namespace="ml", gpu="GPU-2", seconds=3600, used=3600, measured=3600)
    _hour(5, pod="etl-0", namespace="ml", gpu="GPU-1", seconds=7200, used=720, measured=7200)
    _hour(2, pod="bare", namespace="dev", gpu="GPU-9", seconds=3600, used=0, measured=0)
    _hour(24, pod="llm-0", namespace="ml", gpu="GPU-0", seconds=3600, used=3600, measured=3600)
    found = {
        (g.kind, g.key, g.value, g.gpu_model): (g.held_hours, g.used_hours, g.measured_hours)
        for g in gpuhours.day_hours(
            CLUSTER, DAY, label_key="team", gpu_models=gpuhours.gpu_models(CLUSTER)
        )
    }
    assert found == {
        (NAMESPACE, "", "ml", "MI300X"): (3.5, 0.7, 3.25),
        (NAMESPACE, "", "ml", "MI325X"): (1.0, 1.0, 1.0),
        (NAMESPACE, "", "dev", ""): (1.0, 0.0, 0.0),  # a GPU of unknown model
        (WORKLOAD, "", "w-llm", "MI300X"): (1.5, 0.5, 1.25),
        (WORKLOAD, "", "w-llm", "MI325X"): (1.0, 1.0, 1.0),
        (WORKLOAD, "", "w-etl", "MI300X"): (2.0, 0.2, 2.0),
        (WORKLOAD, "", "uid-bare", ""): (1.0, 0.0, 0.0),  # no owner: the pod itself
        (LABEL, "team", "nlp", "MI300X"): (1.5, 0.5, 1.25),
        (LABEL, "team", "nlp", "MI325X"): (1.0, 1.0, 1.0),
        (LABEL, "team", "", "MI300X"): (2.0, 0.2, 2.0),  # etl carries no team label
        (LABEL, "team", "", ""): (1.0, 0.0, 0.0),
    }


def test_without_a_team_label_no_team_groups(db: peewee.Database) -> None:
    _hour(0, pod="p", namespace="ml", gpu="GPU-0", seconds=3600, used=0, measured=0)
    kinds = {g.kind for g in gpuhours.day_hours(CLUSTER, DAY, label_key="", gpu_models={})}
    assert kinds == {NAMESPACE, WORKLOAD}


ML_HOUR = GroupHours(
    kind=NAMESPACE,
    key="",
    value="ml",
    gpu_model="",
    held_hours=1.0,
    used_hours=0.5,
    measured_hours=1.0,
)


def test_a_day_is_replaced_whole(db: peewee.Database) -> None:
    first = [ML_HOUR]
    assert gpuhours.save_day(CLUSTER, DAY, first) == 1
    second = [
        GroupHours(
            kind=NAMESPACE,
            key="",
            value=ns,
            gpu_model="",
            held_hours=2.0,
            used_hours=1.0,
            measured_hours=2.0,
        )
        for ns in ("ml", "dev")
    ]
    assert gpuhours.save_day(CLUSTER, DAY, second) == 2
    rows = {r.group_value: r.held_gpu_hours for r in models.GpuHoursDaily.select()}
    assert rows == {"ml": 2.0, "dev": 2.0}
    assert gpuhours.save_day(CLUSTER, DAY, second) == 0  # summed again, nothing new: no write
    assert gpuhours.save_day(CLUSTER, DAY, second[:1]) == 1  # a group gone is deleted
    assert {r.group_value for r in models.GpuHoursDaily.select()} == {second[0].value}
    gpuhours.save_day(CLUSTER, DAY, second)
    (day,) = {r.day for r in models.GpuHoursDaily.select()}
    assert day == MIDNIGHT
    assert pytest.approx(sum(rows.values())) == 4.0


def test_a_day_is_read_and_replaced_under_the_write_lock(
    sqlite_db: peewee.Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As nodes' rows (tests/kube/cluster/test_noderows.py): read first, then the lock was lost.
    seen = write_lock_seen(monkeypatch, gpuhours, "_stored_day", sqlite_db)
    assert gpuhours.save_day(CLUSTER, DAY, [ML_HOUR]) == 1
    assert seen == [False] and others_may_write(sqlite_db)
