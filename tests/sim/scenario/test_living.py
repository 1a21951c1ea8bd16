"""A scenario's cluster living in real time (what `lens demo` runs): the API emulator serving
the scenario, and per node a kubelet whose pod-resources names the very GPUs the truth gave
each pod, a Docker stand-in running the pods' containers, and a host tree whose GPUs are as
busy as the pods holding them — kept up as the clock moves."""

from __future__ import annotations

import asyncio
import socket
import threading
from pathlib import Path

import pytest

from lens.containers.node.docker import DockerClient
from lens.containers.node.podresources import PodResourcesClient
from lens.runtime.clock import FakeClock
from lens.sim.hosts.amdgpu import pci_dir
from lens.sim.scenario import living
from lens.sim.scenario.living import LivingCluster
from lens.sim.scenario.replaying import ScaledClock
from lens.sim.scenario.runtimes import container_id
from lens.sim.scenario.spec import NodeGroup, Scenario, Workload

SCENARIO = Scenario(
    name="t",
    nodes=(NodeGroup(count=2, gpus=8),),
    workloads=(
        Workload(kind="PyTorchJob", name="train", replicas=2, gpus_per_pod=4),
        Workload(kind="Job", name="eval", gpus_per_pod=1, start=30, duration=60),
    ),
)


def _busy(cluster: LivingCluster, node: str, gpu: int) -> int:
    host = cluster.hosts[node]
    identity = host.tree.node.gpus[gpu]
    return int((pci_dir(host.tree.root, identity) / "gpu_busy_percent").read_text().strip())


def test_each_node_shows_its_agent_what_the_scenario_enacts(
    clock: FakeClock, tmp_path: Path
) -> None:
    failures: list[BaseException] = []
    cluster = LivingCluster(SCENARIO, clock=clock, directory=tmp_path, on_failure=failures.append)
    try:
        cluster.load()
        assert cluster.loaded.is_set() and set(cluster.hosts) == set(SCENARIO.node_names)
        truth = cluster.player.truth
        for name, host in cluster.hosts.items():
            pods = PodResourcesClient(str(host.kubelet.socket_path), timeout_seconds=5)
            try:
                allocated = pods.list()
            finally:
                pods.close()
            bdfs = [g.bdf for g in host.tree.node.gpus]
            expected = {
                (h.namespace, h.pod_name, "main"): sorted(bdfs[i] for i in h.gpus)
                for h in truth.holds
                if h.node == name
            }
            assert {k: sorted(i for d in v for i in d.ids) for k, v in allocated.items()} == (
                expected
            )
            docker = DockerClient(host.docker_socket, host_root=str(tmp_path), timeout_seconds=5)
            try:
                listed = {c.id for c in docker.list_containers()}
            finally:
                docker.close()
            assert listed == {container_id(h) for h in truth.holds if h.node == name}
            for hold in (h for h in truth.holds if h.node == name):
                for gpu in hold.gpus:  # training runs near full from its first minute
                    assert _busy(cluster, name, gpu) == int(
                        truth.gpu_profile(name, gpu).utilization(clock.time())
                    )
        clock.advance(30)
        cluster.step()
        (evaluation,) = [h for h in truth.holds if h.workload.name == "eval"]
        node, gpu = evaluation.node, evaluation.gpus[0]
        assert _busy(cluster, node, gpu) == int(
            truth.gpu_profile(node, gpu).utilization(clock.time())
        )
        clock.advance(60)
        cluster.step()
        assert evaluation.until == clock.time()
        docker = DockerClient(
            cluster.hosts[node].docker_socket, host_root=str(tmp_path), timeout_seconds=5
        )
        try:
            assert docker.list_tasks()[container_id(evaluation)].status == "stopped"
        finally:
            docker.close()
        assert _busy(cluster, node, gpu) == 0  # held by no pod
    finally:
        asyncio.run(cluster.stop())
    assert failures == []


def _answers(path: str) -> bool:
    with socket.socket(socket.AF_UNIX) as client:
        try:
            client.connect(path)
        except OSError:
            return False
    return True


def test_as_a_part_it_serves_at_once_and_builds_the_hosts_meanwhile(tmp_path: Path) -> None:
    failures: list[BaseException] = []
    cluster = LivingCluster(
        SCENARIO, clock=ScaledClock(1), directory=tmp_path, on_failure=failures.append
    )
    asyncio.run(cluster.start())
    try:
        assert cluster.kube.store.resource_version > 0  # the scenario's nodes are there
        assert cluster.loaded.wait(30)
        sockets = [h.docker_socket for h in cluster.hosts.values()]
        assert all(_answers(s) for s in sockets)
    finally:
        asyncio.run(cluster.stop())
    assert not any(_answers(s) for s in sockets) and failures == []


def test_a_step_that_fails_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failed = threading.Event()
    failures: list[BaseException] = []

    def report(exc: BaseException) -> None:
        failures.append(exc)
        failed.set()

    cluster = LivingCluster(SCENARIO, clock=ScaledClock(1), directory=tmp_path, on_failure=report)
    monkeypatch.setattr(living, "TICK_SECONDS", 0.01)

    def broken() -> None:
        raise RuntimeError("simulator bug")

    asyncio.run(cluster.start())
    try:
        assert cluster.loaded.wait(30)
        monkeypatch.setattr(cluster, "step", broken)
        assert failed.wait(10)
    finally:
        asyncio.run(cluster.stop())
    assert [str(e) for e in failures] == ["simulator bug"]
