"""The simulated controllers through the official client: completions, cron, node loss."""

from __future__ import annotations

import kubernetes
import pytest

from lens.runtime.clock import FakeClock
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import spec
from lens.sim.scenario.player import ScenarioPlayer
from lens.sim.scenario.spec import NodeGroup, NodeLoss, Scenario, Workload


def test_jobs_complete_or_fail_at_their_time(
    kube: KubeApiServer, clock: FakeClock, api: kubernetes.client.ApiClient
) -> None:
    player = ScenarioPlayer(spec.small(), kube, clock=clock).load()
    batch = kubernetes.client.BatchV1Api(api)
    player.run_until(100)
    assert batch.read_namespaced_job("eval-mmlu", "ml").status.active == 1
    player.run_until(700)
    done = batch.read_namespaced_job("eval-mmlu", "ml").status
    assert done.succeeded == 1 and done.conditions[0].type == "Complete"
    assert done.completion_time.timestamp() == pytest.approx(1_800_000_000 + 630)
    failed = batch.read_namespaced_job("bad-config", "ml").status
    assert failed.failed == 1 and failed.conditions[0].type == "Failed"
    core = kubernetes.client.CoreV1Api(api)
    (bad_pod,) = core.list_namespaced_pod("ml", label_selector="job-name=bad-config").items
    terminated = bad_pod.status.container_statuses[0].state.terminated
    assert (bad_pod.status.phase, terminated.exit_code, terminated.reason) == ("Failed", 1, "Error")


def test_a_cronjob_runs_on_schedule_and_keeps_three_jobs(
    kube: KubeApiServer, clock: FakeClock, api: kubernetes.client.ApiClient
) -> None:
    player = ScenarioPlayer(spec.small(), kube, clock=clock).load()
    player.run_until(4 * 900 + 10)
    assert kube.settle()
    listed = kubernetes.client.BatchV1Api(api).list_namespaced_job("ml").items
    jobs = [j for j in listed if j.metadata.name.startswith("nightly-bench-")]
    assert len(jobs) == 3
    assert all(j.metadata.owner_references[0].kind == "CronJob" for j in jobs)
    cron_pods = [
        p
        for p in kubernetes.client.CoreV1Api(api).list_namespaced_pod("ml").items
        if p.metadata.name.startswith("nightly-bench-")
    ]
    assert len(cron_pods) == 3, "pods of deleted jobs are garbage-collected"


def test_a_lost_node_goes_not_ready_and_its_pods_move(
    kube: KubeApiServer, clock: FakeClock, api: kubernetes.client.ApiClient
) -> None:
    scenario = Scenario(
        name="loss",
        nodes=(NodeGroup(count=3),),
        workloads=(
            Workload(kind="StatefulSet", name="kv", replicas=2, gpus_per_pod=8),
            Workload(kind="Pod", name="stray", gpus_per_pod=0),
        ),
        node_losses=(NodeLoss(node="gpu-node-0000", at=60, eviction_delay=300),),
    )
    player = ScenarioPlayer(scenario, kube, clock=clock).load()
    core = kubernetes.client.CoreV1Api(api)
    before = {p.metadata.name: p.spec.node_name for p in core.list_namespaced_pod("default").items}
    assert before["kv-0"] == "gpu-node-0000"
    player.run_until(61)
    ready = core.read_node("gpu-node-0000").status.conditions[0]
    assert (ready.type, ready.status) == ("Ready", "Unknown")
    player.run_until(400)
    after = {p.metadata.name: p.spec.node_name for p in core.list_namespaced_pod("default").items}
    assert after["kv-0"] == "gpu-node-0002", (
        "the StatefulSet pod comes back elsewhere under its name"
    )
    assert after["kv-1"] == before["kv-1"]
    assert ("stray" in after) == (before["stray"] != "gpu-node-0000")


def test_pods_that_do_not_fit_stay_pending(kube: KubeApiServer, clock: FakeClock) -> None:
    scenario = Scenario(
        name="tight",
        nodes=(NodeGroup(count=1),),
        workloads=(Workload(kind="Deployment", name="big", replicas=2, gpus_per_pod=8),),
    )
    player = ScenarioPlayer(scenario, kube, clock=clock).load()
    assert player.pod_phases() == {"Running": 1, "Pending": 1}
