"""Scenarios through the official client: owner chains, lifecycles, node loss, host side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import kubernetes
import pytest

from lens.proto._generated.podresources.v1 import api_pb2, api_pb2_grpc
from lens.runtime.clock import FakeClock
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import spec
from lens.sim.scenario.player import ScenarioPlayer


def _owner_chain(api: kubernetes.client.ApiClient, pod: Any) -> list[str]:
    """Follow controller ownerReferences to the top, through the dynamic client."""
    dynamic = kubernetes.dynamic.DynamicClient(api)
    chain, current = [], pod.to_dict()
    namespace = current["metadata"]["namespace"]
    while current["metadata"].get("owner_references") or current["metadata"].get("ownerReferences"):
        refs = current["metadata"].get("owner_references") or current["metadata"]["ownerReferences"]
        ref = refs[0]
        api_version, kind, name = (
            ref.get("api_version") or ref["apiVersion"],
            ref["kind"],
            ref["name"],
        )
        chain.append(f"{kind}/{name}")
        current = (
            dynamic.resources.get(api_version=api_version, kind=kind)
            .get(name=name, namespace=namespace)
            .to_dict()
        )
    return chain


def test_the_small_preset_builds_every_owner_chain(
    kube: KubeApiServer, clock: FakeClock, api: kubernetes.client.ApiClient
) -> None:
    ScenarioPlayer(spec.small(), kube, clock=clock).load()
    core = kubernetes.client.CoreV1Api(api)
    nodes = core.list_node().items
    assert [n.metadata.name for n in nodes] == ["gpu-node-0000", "gpu-node-0001"]
    assert nodes[0].status.capacity["amd.com/gpu"] == "8"
    assert nodes[0].metadata.labels["amd.com/gpu.product-name"] == "AMD_Instinct_MI300X"
    pods = {p.metadata.name: p for p in core.list_pod_for_all_namespaces().items}
    chains = {name: _owner_chain(api, pod) for name, pod in pods.items()}
    assert chains["llama-pretrain-master-0"] == ["PyTorchJob/llama-pretrain"]
    assert chains["rayworker-1"] == ["StatefulSet/rayworker"]
    assert chains["debug-shell"] == []
    (serving,) = [c for n, c in chains.items() if n.startswith("vllm-serve-")]
    assert serving[0].startswith("ReplicaSet/vllm-serve-") and serving[1] == "Deployment/vllm-serve"
    (nightly,) = [c for n, c in chains.items() if n.startswith("nightly-bench-")]
    assert nightly[0].startswith("Job/nightly-bench-") and nightly[1] == "CronJob/nightly-bench"
    running = pods["llama-pretrain-master-0"]
    assert running.status.phase == "Running"
    assert running.spec.containers[0].resources.limits["amd.com/gpu"] == "4"
    assert running.status.container_statuses[0].container_id.startswith("containerd://")
    assert len(running.status.container_statuses[0].container_id) == len("containerd://") + 64
    assert running.spec.node_name in ("gpu-node-0000", "gpu-node-0001")


def test_namespaces_and_top_level_workloads_carry_their_team_label(
    kube: KubeApiServer, clock: FakeClock, api: kubernetes.client.ApiClient
) -> None:
    player = ScenarioPlayer(spec.small(), kube, clock=clock).load()
    player.run_until(120)  # the CronJob's first Job, the Jobs begun
    core = kubernetes.client.CoreV1Api(api)
    teams = {
        n.metadata.name: (n.metadata.labels or {}).get("team") for n in core.list_namespace().items
    }
    assert {name: team for name, team in teams.items() if team} == {
        "ml": "research",
        "serving": "inference",
    }
    assert teams["default"] is None
    dynamic = kubernetes.dynamic.DynamicClient(api)
    found = {}
    for api_version, kind in (
        ("apps/v1", "Deployment"),
        ("apps/v1", "StatefulSet"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
        ("kubeflow.org/v1", "PyTorchJob"),
    ):
        for item in dynamic.resources.get(api_version=api_version, kind=kind).get().items:
            found[f"{kind}/{item.metadata.name}"] = dict(item.metadata.labels or {}).get("team")
    # The top-level workloads are their namespace's team's; a CronJob's Job is not top-level.
    assert found.pop("Deployment/vllm-serve") == "inference"
    assert {k: v for k, v in found.items() if not k.startswith("Job/nightly-bench-")} == {
        "StatefulSet/rayworker": "research",
        "Job/eval-mmlu": "research",
        "Job/bad-config": "research",
        "CronJob/nightly-bench": "research",
        "PyTorchJob/llama-pretrain": "research",
    }
    assert [v for k, v in found.items() if k.startswith("Job/nightly-bench-")] == [None]
    # The truth names each hold's team as Lens reads it: the top-level workload's label.
    held = {h.workload.name: h.workload.team for h in player.truth.holds if h.gpus}
    assert held["llama-pretrain"] == "research" and held["vllm-serve"] == "inference"


def test_the_host_side_agrees_with_the_api_server(
    kube: KubeApiServer, clock: FakeClock, tmp_path: Path
) -> None:
    player = ScenarioPlayer(spec.small(), kube, clock=clock, hosts_dir=tmp_path / "hosts").load()
    node = player.nodes_with_pods()[0]
    tree = player.host_tree(node)
    assert tree.spec.name == node and len(tree.node.gpus) == 8
    with player.kubelet(node, tmp_path / "kubelet") as kubelet:
        channel = grpc.insecure_channel(f"unix://{kubelet.socket_path}")
        with channel:
            listed = api_pb2_grpc.PodResourcesListerStub(channel).List(
                api_pb2.ListPodResourcesRequest()
            )
        device_ids = {
            d
            for p in listed.pod_resources
            for c in p.containers
            for dev in c.devices
            for d in dev.device_ids
        }
        assert device_ids <= {g.bdf for g in tree.node.gpus}
        by_pod = {
            p.name: {d for c in p.containers for dev in c.devices for d in dev.device_ids}
            for p in listed.pod_resources
        }
        held = {h.pod_name: h.gpus for h in player.truth.holds if h.node == node}
        assert by_pod == {
            name: {tree.node.gpus[i].bdf for i in gpus} for name, gpus in held.items()
        }, "the kubelet gives each pod the GPUs the scenario's scheduler chose"
        api_gpus = sum(
            int(c["resources"]["limits"].get("amd.com/gpu", 0))
            for pod in kubelet.pods()
            for c in pod["spec"]["containers"]
        )
        assert len(device_ids) == api_gpus > 0
    bare = KubeApiServer(clock=FakeClock())
    try:
        with pytest.raises(ValueError, match="hosts_dir"):
            ScenarioPlayer(spec.small(), bare, clock=FakeClock()).host_tree("gpu-node-0000")
    finally:
        bare.stop()


def test_a_gpu_is_as_busy_as_the_pod_holding_it_and_idle_without_one(
    kube: KubeApiServer, clock: FakeClock, tmp_path: Path
) -> None:
    player = ScenarioPlayer(spec.small(), kube, clock=clock, hosts_dir=tmp_path / "hosts").load()
    player.run_until(40)  # eval-mmlu runs from 30 s to 630 s
    (job,) = [h for h in player.truth.holds if h.workload.name == "eval-mmlu"]
    tree = player.host_tree(job.node)
    (index,) = job.gpus
    tree.update()
    expected = player.truth.profile_of(job.workload).utilization(clock.time())
    assert tree.node.gpu_readings[index].utilization == expected > 0
    held = {
        i
        for h in player.truth.holds
        if h.node == job.node and h.holds_at(clock.time())
        for i in h.gpus
    }
    for free in set(range(8)) - held:
        assert tree.node.gpu_readings[free].utilization == 0
    player.run_until(700)
    tree.update()
    assert tree.node.gpu_readings[index].utilization == 0, "idle once the job finished"
    assert [g.uuid for g in player.gpus(job.node)] == [g.uuid for g in tree.node.gpus]


def test_a_scenario_can_start_later_than_its_player(kube: KubeApiServer, clock: FakeClock) -> None:
    start = clock.time() + 45
    player = ScenarioPlayer(spec.small(), kube, clock=clock, start_time=start)
    assert not player.truth.holds
    player.load()
    assert clock.time() == start and {h.since for h in player.truth.holds} == {start}
    player.run_until(100)
    (job,) = [h for h in player.truth.holds if h.workload.name == "eval-mmlu"]
    assert job.since == start + 30


@pytest.mark.timeout(60)
def test_the_large_preset_loads_every_object(clock: FakeClock) -> None:
    kube = KubeApiServer(clock=clock)
    try:
        player = ScenarioPlayer(spec.large(), kube, clock=clock).load()
        player.run_until(3600)
        phases = player.pod_phases()
        assert sum(phases.values()) == 5000
        assert phases.get("Pending", 0) == 0
        nodes, _ = kube.store.select(kube.resource("v1", "Node"), None, *_everything())
        assert len(nodes) == 1000
    finally:
        kube.stop()


def _everything() -> tuple[Any, Any]:
    from lens.sim.kube.selectors import FieldSelector, LabelSelector

    return LabelSelector(), FieldSelector()
