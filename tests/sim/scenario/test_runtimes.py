"""A played scenario's Docker stand-in, read with the node agent's own Docker client: a pod's
container runs from its pod's start with the kubelet's labels, and ends with its pod — exit 1
for a failed pod, gone for a deleted one; the announcer tells each hold once."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from lens.containers.node.docker import DockerClient
from lens.runtime.clock import FakeClock
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario.player import ScenarioPlayer
from lens.sim.scenario.runtimes import Announcer, ScriptedRuntime, container_id
from lens.sim.scenario.spec import NodeGroup, Scenario, Workload
from lens.sim.scenario.truth import DELETED

SCENARIO = Scenario(
    name="t",
    nodes=(NodeGroup(count=1, gpus=8),),
    workloads=(
        Workload(kind="Deployment", name="serve", gpus_per_pod=2),
        Workload(kind="Job", name="ok", gpus_per_pod=1, start=30, duration=60),
        Workload(kind="Job", name="bad", gpus_per_pod=1, start=30, duration=30, fails=True),
    ),
)


def test_the_announcer_tells_each_hold_once(clock: FakeClock, kube: KubeApiServer) -> None:
    player = ScenarioPlayer(SCENARIO, kube, clock=clock).load()
    announcer = Announcer(player.truth)
    begun, ended = announcer.due(clock.time())
    assert [h.pod_name.rsplit("-", 2)[0] for h in begun] == ["serve"] and ended == []
    assert announcer.due(clock.time()) == ([], [])
    player.run_until(30)
    begun, ended = announcer.due(clock.time())
    assert sorted(h.workload.name for h in begun) == ["bad", "ok"] and ended == []
    player.run_until(90)
    begun, ended = announcer.due(clock.time())
    assert begun == [] and sorted(h.workload.name for h in ended) == ["bad", "ok"]
    assert sorted(h.until or 0 for h in ended) == [player.start_time + 60, player.start_time + 90]


def test_the_agents_docker_client_sees_the_pods_containers(
    clock: FakeClock, kube: KubeApiServer, tmp_path: Path
) -> None:
    player = ScenarioPlayer(SCENARIO, kube, clock=clock).load()
    announcer = Announcer(player.truth)
    runtime = ScriptedRuntime(tmp_path / "docker.sock")
    client = DockerClient(runtime.docker.socket, host_root=str(tmp_path), timeout_seconds=5)
    try:
        player.run_until(30)
        begun, _ = announcer.due(clock.time())
        for hold in begun:
            runtime.started(hold)
        listed = {c.id: c for c in client.list_containers()}
        assert set(listed) == {container_id(h) for h in player.truth.holds}
        for hold in player.truth.holds:
            found = listed[container_id(hold)]
            assert found.labels["io.kubernetes.pod.uid"] == hold.pod_uid
            assert found.labels["io.kubernetes.pod.name"] == hold.pod_name
            assert found.labels["io.kubernetes.container.name"] == "main"
            assert found.created_at == hold.since
            # No device nodes: the kubelet's pod-resources names the pod's GPUs.
            assert json.loads(found.spec)["linux"]["devices"] == []
        player.run_until(90)
        _, ended = announcer.due(clock.time())
        for hold in ended:
            runtime.ended(hold)
        tasks = client.list_tasks()
        exits = {h.workload.name: tasks[container_id(h)] for h in ended}
        assert (exits["bad"].status, exits["bad"].exit_status) == ("stopped", 1)
        assert (exits["ok"].status, exits["ok"].exit_status) == ("stopped", 0)
        assert exits["bad"].exited_at == player.start_time + 60
        (serving,) = [h for h in player.truth.holds if h.workload.name == "serve"]
        deleted = dataclasses.replace(serving, until=clock.time(), ended_by=DELETED)
        runtime.ended(deleted)
        assert container_id(serving) not in client.list_tasks()
    finally:
        client.close()
        runtime.stop()


def test_only_containers_holding_gpus_are_expected_of_the_agent(
    clock: FakeClock, kube: KubeApiServer, tmp_path: Path
) -> None:
    """An agent follows only containers with devices: a pod holding no GPU runs a container
    the agent never sees, and nothing is expected of it."""
    scenario = dataclasses.replace(
        SCENARIO,
        workloads=(
            *SCENARIO.workloads,
            Workload(kind="Pod", name="shell", gpus_per_pod=0, start=0, duration=60),
        ),
    )
    player = ScenarioPlayer(scenario, kube, clock=clock).load()
    announcer = Announcer(player.truth)
    runtime = ScriptedRuntime(tmp_path / "docker.sock")
    try:
        player.run_until(90)
        begun, ended = announcer.due(clock.time())
        for hold in begun:
            runtime.started(hold)
        for hold in ended:
            runtime.ended(hold)
        by_name = {h.workload.name: container_id(h) for h in player.truth.holds}
        assert set(runtime.docker.bodies) == set(by_name.values()), "every pod's container runs"
        assert runtime.expected == {
            by_name["serve"]: "Running",
            by_name["ok"]: "Exit",
            by_name["bad"]: "Exit",
        }
    finally:
        runtime.stop()
