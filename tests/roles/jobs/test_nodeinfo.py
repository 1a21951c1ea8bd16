"""The node info job: a row per GPU node with its facts, allocation and utilization, written only
when something changed — a run where nothing changed writes 0 rows and asks the API nothing —
the GPU model as the GPUs name themselves, and the nodes' figures said to be as of each run."""

from __future__ import annotations

import datetime

import kubernetes
import peewee

from lens.reports.storing import partitions
from lens.roles.jobs.nodeinfo import NodeInfo
from lens.runtime.clock import FakeClock
from lens.runtime.config import Config
from lens.sim.kube.server import KubeApiServer
from lens.store import database, freshness, models
from tests.roles.jobs.clusterobjects import add_node, add_pod, watching

NOW = datetime.datetime(2026, 11, 24, 10, 0, 30, tzinfo=datetime.UTC)
SETTLED_MINUTE = datetime.datetime(2026, 11, 24, 9, 58, tzinfo=datetime.UTC)


def _gpu_minute(node: str, uuid: str, utilization: float) -> None:
    models.GpuMinuteReport.create(
        cluster="default",
        node_name=node,
        gpu_uuid=uuid,
        gpu_index=0,
        minute=SETTLED_MINUTE,
        samples=60,
        expected_samples=60,
        utilization_mean_ratio=utilization,
        idle_seconds=0.0,
        holders=1,
    )


def test_node_rows_follow_the_cluster_and_are_not_rewritten(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient, db: peewee.Database
) -> None:
    add_node(apiserver, "gpu-a")
    add_node(apiserver, "gpu-b", ready=False)
    add_pod(apiserver, "train-0", "gpu-a", 4)
    with database.session(db):
        partitions.ensure_days(db, [SETTLED_MINUTE.date()])
        _gpu_minute("gpu-a", "g0", 0.9)
        _gpu_minute("gpu-a", "g1", 0.5)
        models.GpuDevice.create(
            cluster="default",
            node_name="gpu-a",
            uuid="g0",
            gpu_id=0,
            driver_version="6.8.5",
            gpu_model="AMD Instinct MI300X",
        )
    clock = FakeClock(start_time=NOW.timestamp())
    with watching(api_client) as caches:
        body = NodeInfo(Config(), caches, db=db, clock=clock)
        body.run()
        assert body.last_written == 2
        before = sum(apiserver.requests().values())
        clock.advance(20)  # the same settled minute
        body.run()
        assert body.last_written == 0
        assert sum(apiserver.requests().values()) == before
    # Written nothing, yet measured: the rows are as of the last run.
    nodes = freshness.read(db, cluster="default", figures=[freshness.NODES])[freshness.NODES]
    assert nodes.as_of == NOW + datetime.timedelta(seconds=20)
    assert nodes.stale_after_seconds == 60.0
    with database.session(db):
        rows = {n.name: n for n in models.Node.select()}
    a, b = rows["gpu-a"], rows["gpu-b"]
    assert (a.gpu_count, a.gpu_allocation, a.status, a.driver_version) == (8, 4, "Ready", "6.8.5")
    assert a.gpu_utilization is not None and abs(a.gpu_utilization - 70.0) < 1e-9
    # The GPUs' own name where the agent reported them; the label's (no spaces) where not.
    assert (a.gpu_name, b.gpu_name) == ("AMD Instinct MI300X", "AMD_Instinct_MI300X")
    assert a.cpu_count == 192
    assert (b.status, b.gpu_allocation, b.gpu_utilization) == ("Unknown", 0, None)
