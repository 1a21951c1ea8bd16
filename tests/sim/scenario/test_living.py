"""A scenario's cluster living in real time (what `lens demo` runs): the API emulator serving
the scenario, and per node a kubelet whose pod-resources names the very GPUs the truth gave
each pod, a Docker stand-in running the pods' containers, and a host tree whose GPUs are as
busy as the pods holding them — kept up as the clock moves."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import threading
from pathlib import Path

import pytest

from lens.containers.node.docker import DockerClient
from lens.containers.node.podresources import PodResourcesClient
from lens.devices.amdgpu import AmdGpuCollector
from lens.devices.gpu import GpuSnapshot
from lens.devices.sysfs import HostFiles
from lens.runtime.clock import FakeClock
from lens.sim.hosts.amdgpu import pci_dir
from lens.sim.scenario import living, spec
from lens.sim.scenario.living import LivingCluster
from lens.sim.scenario.replaying import ScaledClock
from lens.sim.scenario.runtimes import container_id
from lens.sim.scenario.spec import GpuFault, NodeGroup, Scenario, Workload

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


def test_a_scenarios_gpu_faults_reach_the_files_its_agent_reads_when_due(
    clock: FakeClock, tmp_path: Path
) -> None:
    faults = (
        GpuFault(node="gpu-node-0001", gpu=2, at=30.0, kind="uncorrectable_error"),
        GpuFault(node="gpu-node-0000", gpu=5, at=0.0, kind="thermal_throttle"),
        GpuFault(node="gpu-node-0000", gpu=1, at=30.0, kind="pending_pages"),
    )
    scenario = dataclasses.replace(SCENARIO, gpu_faults=faults)
    failures: list[BaseException] = []
    cluster = LivingCluster(scenario, clock=clock, directory=tmp_path, on_failure=failures.append)

    def read(node: str) -> dict[int, GpuSnapshot]:
        host = cluster.hosts[node]
        gpus = AmdGpuCollector(HostFiles(host.tree.root)).collect().gpus
        return {g.index: g for g in gpus}

    def uncorrectable(gpu: GpuSnapshot) -> int:
        return sum(n for _block, kind, n in gpu.ecc_errors if kind == "uncorrectable")

    try:
        cluster.load()
        first = {node: read(node) for node in ("gpu-node-0000", "gpu-node-0001")}
        assert uncorrectable(first["gpu-node-0001"][2]) == 0  # not yet
        throttle = first["gpu-node-0000"][5].throttle
        assert throttle is not None and dict(throttle.residency)["thermal_hbm"] == 0
        clock.advance(30)
        cluster.step()
        after = {node: read(node) for node in ("gpu-node-0000", "gpu-node-0001")}
        assert uncorrectable(after["gpu-node-0001"][2]) == 1
        assert {i for i, g in after["gpu-node-0001"].items() if uncorrectable(g)} == {2}
        hot = after["gpu-node-0000"][5].throttle
        assert hot is not None and dict(hot.residency)["thermal_hbm"] == 30  # every second of it
        assert dict(after["gpu-node-0000"][1].vram_bad_pages)["pending"] == 1
        cool = after["gpu-node-0000"][4].throttle
        assert cool is not None and dict(cool.residency)["thermal_hbm"] == 0
    finally:
        asyncio.run(cluster.stop())
    assert failures == []


def test_the_medium_preset_has_a_failing_and_a_throttling_gpu() -> None:
    kinds = {(f.node, f.gpu): f.kind for f in spec.medium().gpu_faults}
    assert sorted(kinds.values()) == ["thermal_throttle", "uncorrectable_error"]
    assert set(node for node, _ in kinds) <= set(spec.medium().node_names)
