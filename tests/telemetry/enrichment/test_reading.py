"""The store's rows read as index facts: first readings, rows changed since a point (by stamp or
by id), containers with all their devices, GPUs that left, workloads with their team."""

from __future__ import annotations

import datetime

import peewee

from lens.store import database, models
from lens.telemetry.enrichment import reading
from lens.telemetry.enrichment.index import GPU, RDMA, DeviceFacts, GpuFacts, PodFacts
from lens.telemetry.enrichment.reading import Since
from tests.telemetry.enrichment.clusterrows import CLUSTER, T0, Clock, LabCluster, workload_object

HOUR = datetime.timedelta(hours=1)


def test_pods_first_and_since(db: peewee.Database) -> None:
    clock = Clock()
    lab = LabCluster(db, clock)
    job = workload_object("uid-job", "Job", name="job")
    done = lab.pod("uid-done", name="done", node="n1", owner=job)
    lab.finish(done)
    clock.advance(3600)
    lab.pod("uid-live", name="live", node="n2")
    with database.session(db):
        assert [p.uid for p in reading.first_pods(CLUSTER, ended_after=T0 + HOUR)] == ["uid-live"]
        both = reading.first_pods(CLUSTER, ended_after=T0)
        assert sorted(p.uid for p in both) == ["uid-done", "uid-live"]
        assert next(p for p in both if p.uid == "uid-done") == PodFacts(
            uid="uid-done",
            name="done",
            namespace="ml",
            node="n1",
            ended=True,
            owner_uid="uid-job",
            stamp=T0,
        )
        last = reading.last_id(models.GpuPod, CLUSTER)
        assert reading.last_id(models.GpuPod, "other") == 0
        by_stamp = reading.changed_pods(CLUSTER, Since(at=T0 + HOUR, after_id=last))
        assert [p.uid for p in by_stamp] == ["uid-live"]
        by_id = reading.changed_pods(CLUSTER, Since(at=T0 + 2 * HOUR, after_id=last - 1))
        assert [p.uid for p in by_id] == ["uid-live"]
        assert reading.changed_pods(CLUSTER, Since(at=T0 + 2 * HOUR, after_id=last)) == []
        assert reading.pods_with_rows(CLUSTER, ["uid-done", "uid-nobody"]) == {"uid-done"}


def test_containers_come_with_all_their_devices(db: peewee.Database) -> None:
    lab = LabCluster(db, Clock())
    pod = lab.pod("uid-p", name="p", node="n1")
    lab.container(pod, node="n1", container_id="c1", gpus=[(0, "GPU-AB"), (1, "")], rdma=["mlx5_0"])
    lab.container(pod, node="n1", container_id="c-none")  # no devices: nothing to hold
    with database.session(db):
        (found,) = reading.containers_of(CLUSTER, ["uid-p"])
        assert (found.container_id, found.pod_uid, found.pod_name, found.live) == (
            "c1",
            "uid-p",
            "p",
            True,
        )
        assert set(found.devices) == {
            DeviceFacts(kind=GPU, number=0, id="ab"),
            DeviceFacts(kind=GPU, number=1, id="index:1"),  # a GPU with no uuid: by its index
            DeviceFacts(kind=RDMA, number=0, id="mlx5_0"),
        }
        assert [c.container_id for c in reading.live_containers(CLUSTER)] == ["c1"]
        since = Since(at=T0 + HOUR, after_id=reading.last_id(models.NodeContainer, CLUSTER))
        assert reading.changed_containers(CLUSTER, since) == []


def test_gpus_that_left_are_told_apart(db: peewee.Database) -> None:
    clock = Clock()
    lab = LabCluster(db, clock)
    lab.gpus("n1", [(0, "GPU-AA", "00000000:3B:00.0", "S0"), (-1, "GPU-BB", "", "")])
    with database.session(db):
        first = {g.uuid: g for g in reading.first_gpus(CLUSTER)}
        assert first["aa"] == GpuFacts(
            row_id=first["aa"].row_id,
            node="n1",
            uuid="aa",
            index="0",
            pci="0000:3b:00.0",
            serial="s0",
        )
        assert (first["bb"].index, first["bb"].pci) == ("", "")
        last = reading.last_id(models.GpuDevice, CLUSTER)
    clock.advance(60)
    lab.remove_gpu("n1", "GPU-BB")
    with database.session(db):
        assert [g.uuid for g in reading.first_gpus(CLUSTER)] == ["aa"]
        kept, gone = reading.changed_gpus(
            CLUSTER, Since(at=T0 + datetime.timedelta(seconds=30), after_id=last)
        )
        assert kept == [] and len(gone) == 1


def test_workloads_come_with_their_team(db: peewee.Database) -> None:
    lab = LabCluster(db, Clock())
    parent = workload_object("uid-top", "PyTorchJob", name="top", labels={"team": "vision"})
    child = workload_object("uid-child", "Job", name="child", owner=parent)
    lab.workloads([parent, child])
    with database.session(db):
        rows = {
            r.workload.uid: r
            for r in reading.workloads(CLUSTER, ["uid-top", "uid-child"], team_key="team")
        }
        assert rows["uid-top"].workload.team == "vision" and rows["uid-top"].parent_uid == ""
        assert rows["uid-child"].parent_uid == "uid-top" and rows["uid-child"].workload.team == ""
        since = Since(at=T0, after_id=reading.last_id(models.GpuWorkload, CLUSTER))
        changed = reading.changed_workloads(CLUSTER, since, team_key="")
        assert {r.workload.uid for r in changed} == {"uid-top", "uid-child"}
        assert {r.workload.team for r in changed} == {""}
