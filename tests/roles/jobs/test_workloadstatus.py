"""The workload status job: a GPU pod deleted while no controller watched is closed and its
workload ended, from the pod cache and the controller's rows."""

from __future__ import annotations

import datetime

import kubernetes
import peewee

from lens.roles.jobs.workloadstatus import WorkloadStatus
from lens.runtime.clock import FakeClock
from lens.runtime.config import Config
from lens.sim.kube.server import KubeApiServer
from lens.store import database, models
from tests.roles.jobs.clusterobjects import add_node, add_pod, set_phase, watching

NOW = datetime.datetime(2026, 11, 24, 10, 0, tzinfo=datetime.UTC)
LONG_AGO = NOW - datetime.timedelta(hours=1)


def test_pods_gone_unseen_are_closed_and_their_workloads_end(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient, db: peewee.Database
) -> None:
    add_node(apiserver, "gpu-a")
    live = add_pod(apiserver, "train-0", "gpu-a", 8)
    set_phase(apiserver, "train-0", "Succeeded")
    with database.session(db):
        for uid, phase in ((live["metadata"]["uid"], "Running"), ("deleted-unseen", "Running")):
            models.GpuPod.create(
                cluster="default",
                namespace="ml",
                name=uid,
                uid=uid,
                gpu_allocated=8,
                phase=phase,
                running=True,
                created_at=LONG_AGO,
            )
        for workload, pod in (("job-a", live["metadata"]["uid"]), ("job-b", "deleted-unseen")):
            models.GpuWorkload.create(
                cluster="default", uid=workload, kind="Job", name=workload, status="Running"
            )
            models.WorkloadPodReference.create(
                cluster="default", workload_uid=workload, pod_uid=pod
            )
    with watching(api_client) as caches:
        body = WorkloadStatus(Config(), caches, db=db, clock=FakeClock(start_time=NOW.timestamp()))
        body.run()
        assert (body.last.pods_closed, body.last.phases_persisted) == (1, 1)
        assert body.last.workloads_ended == 2
        body.run()
        assert body.last.pods_closed + body.last.phases_persisted + body.last.workloads_ended == 0
    with database.session(db):
        pods = {p.uid: p for p in models.GpuPod.select()}
        workloads = {w.uid: w for w in models.GpuWorkload.select()}
        resource = models.PodResource.get(models.PodResource.uid == live["metadata"]["uid"])
    assert pods["deleted-unseen"].deleted and not pods["deleted-unseen"].running
    assert pods[live["metadata"]["uid"]].phase == "Succeeded"
    assert resource.gpu_model == "AMD_Instinct_MI300X"  # from the node cache, never blanked
    assert (workloads["job-a"].status, workloads["job-b"].status) == ("Succeeded", "Deleted")
