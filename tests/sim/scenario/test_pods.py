"""Pods as the simulated scheduler and kubelets run them, and the truth they leave."""

from __future__ import annotations

from collections import Counter

from lens.runtime.clock import FakeClock
from lens.sim.kube.selectors import FieldSelector, LabelSelector
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import spec
from lens.sim.scenario.player import ScenarioPlayer
from lens.sim.scenario.pods import workload_ref
from lens.sim.scenario.spec import NodeGroup, NodeLoss, Scenario, Workload
from lens.sim.scenario.truth import DELETED, FAILED, FINISHED, NODE_LOST, WorkloadRef

START = 1_800_000_000.0  # the clock fixture's


def test_each_bound_pod_holds_its_own_gpus_of_its_node_for_its_top_level_workload(
    kube: KubeApiServer, clock: FakeClock
) -> None:
    player = ScenarioPlayer(spec.small(), kube, clock=clock).load()
    holds = {h.pod_name: h for h in player.truth.holds}
    pods, _ = kube.store.select(kube.resource("v1", "Pod"), None, LabelSelector(), FieldSelector())
    bound = {p["metadata"]["name"]: p for p in pods if p["spec"].get("nodeName")}
    assert set(holds) == set(bound)
    for name, hold in holds.items():
        pod = bound[name]
        assert (hold.pod_uid, hold.node) == (pod["metadata"]["uid"], pod["spec"]["nodeName"])
        limits = pod["spec"]["containers"][0]["resources"]["limits"]
        assert len(hold.gpus) == int(limits.get("amd.com/gpu", 0)) and hold.since == START
    taken = Counter((h.node, gpu) for h in holds.values() for gpu in h.gpus)
    assert set(taken.values()) == {1}, "no GPU is given twice"
    kinds = {h.workload.kind: h.workload.name for h in holds.values()}
    assert kinds == {
        "PyTorchJob": "llama-pretrain",
        "Deployment": "vllm-serve",
        "StatefulSet": "rayworker",
        "CronJob": "nightly-bench",
        "Pod": "debug-shell",
    }
    shell = holds["debug-shell"]
    assert (shell.gpus, shell.workload.uid) == ((), shell.pod_uid), "an ownerless pod is its own"


def test_holds_end_when_pods_finish_fail_or_are_deleted(
    kube: KubeApiServer, clock: FakeClock
) -> None:
    player = ScenarioPlayer(spec.small(), kube, clock=clock).load()
    player.run_until(1000)
    holds = {h.workload.name: h for h in player.truth.holds}
    assert (holds["eval-mmlu"].until, holds["eval-mmlu"].ended_by) == (START + 630, FINISHED)
    assert (holds["bad-config"].until, holds["bad-config"].ended_by) == (START + 150, FAILED)
    cron = sorted(
        (h for h in player.truth.holds if h.workload.kind == "CronJob"), key=lambda h: h.since
    )
    assert [(h.since - START, h.until and h.until - START) for h in cron] == [(0, 120), (900, None)]
    assert holds["vllm-serve"].until is None
    player.run_until(4 * 900 + 10)
    assert not [h for h in player.truth.holds if h.ended_by == DELETED], (
        "cron pods finished before their jobs were deleted"
    )


def test_a_deleted_workloads_pods_give_their_gpus_back(
    kube: KubeApiServer, clock: FakeClock
) -> None:
    scenario = Scenario(
        name="short",
        nodes=(NodeGroup(count=1),),
        workloads=(
            Workload(kind="Deployment", name="web", replicas=2, gpus_per_pod=2, duration=300),
        ),
    )
    player = ScenarioPlayer(scenario, kube, clock=clock).load()
    player.run_until(301)
    assert [(h.until, h.running_until, h.ended_by) for h in player.truth.holds] == [
        (START + 300, START + 300, DELETED)
    ] * 2
    assert sorted(g for h in player.truth.holds for g in h.gpus) == [0, 1, 2, 3]


def test_a_lost_nodes_gpus_go_with_it_and_its_pods_come_back_elsewhere(
    kube: KubeApiServer, clock: FakeClock
) -> None:
    scenario = Scenario(
        name="loss",
        nodes=(NodeGroup(count=3),),
        workloads=(Workload(kind="StatefulSet", name="kv", replicas=2, gpus_per_pod=8),),
        node_losses=(NodeLoss(node="gpu-node-0000", at=60, eviction_delay=300),),
    )
    player = ScenarioPlayer(scenario, kube, clock=clock).load()
    player.run_until(400)
    first, second, back = player.truth.holds
    assert (first.node, first.until, first.ended_by) == ("gpu-node-0000", START + 60, NODE_LOST)
    assert first.running_until == START + 360, "it ran (as far as the API says) until evicted"
    assert second.until is None
    assert (back.pod_name, back.node, back.since) == ("kv-0", "gpu-node-0002", START + 360)
    assert back.pod_uid != first.pod_uid and player.truth.lost == {"gpu-node-0000": START + 60}


def test_a_workload_ref_names_an_api_object() -> None:
    obj = {
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "team-1", "uid": "u-1"},
    }
    assert workload_ref(obj) == WorkloadRef(
        kind="Deployment", name="web", namespace="team-1", uid="u-1"
    )
