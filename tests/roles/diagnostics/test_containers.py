"""`lens containers` lists a real containerd's containers with the devices of a simulated node."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from lens.containers.model import Source
from lens.roles.diagnostics import containers
from lens.runtime import errors
from lens.runtime.config import ContainersConfig, HostConfig
from lens.sim.containerd import PrivateContainerd, pod_labels
from lens.sim.docker import PrivateDocker
from lens.sim.hosts.tree import HostTree
from lens.sim.kubelet import podresources
from lens.sim.kubelet.devices import Device, DeviceAllocator

pytestmark = pytest.mark.slow_timeout

REPO = Path(__file__).resolve().parents[3]


def _text(renderable: object) -> str:
    console = Console(file=io.StringIO(), width=200)
    console.print(renderable)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


@pytest.fixture
def running(containerd: PrivateContainerd, device_nodes: dict[str, Path]) -> Iterator[None]:
    """A GPU+RDMA container in pod team-a/train-0, and one given no device."""
    labels = pod_labels(pod="train-0", namespace="team-a", uid="uid-0", container="worker")
    devices = [device_nodes["card"], device_nodes["render"], device_nodes["uverbs"]]
    started = [
        containerd.run("listed-gpu", ["sleep", "60"], labels=labels, devices=devices, detach=True),
        containerd.run("listed-plain", ["sleep", "60"], detach=True),
    ]
    try:
        assert [s.returncode for s in started] == [0, 0], [s.stderr for s in started]
        yield
    finally:
        for name in ("listed-gpu", "listed-plain"):
            containerd.kill_and_delete(name)


def _read(
    tree: HostTree, ctd: PrivateContainerd, *, everything: bool
) -> containers.ContainersReport:
    return containers.diagnostic(
        HostConfig(root=str(tree.root)),
        ContainersConfig(
            namespace="k8s.io",
            all_containers=everything,
            containerd_address=ctd.socket,
            pod_resources_socket="",
        ),
    ).read()


def test_containers_with_their_pods_and_devices(
    mi300x: HostTree, containerd: PrivateContainerd, running: None
) -> None:
    report = _read(mi300x, containerd, everything=False)
    (gpu,) = report.containers
    assert (gpu.id, gpu.name, gpu.status) == ("listed-gpu", "worker", "Running")
    assert gpu.pod is not None and (gpu.pod.namespace, gpu.pod.name) == ("team-a", "train-0")
    assert [(d.type, d.number) for d in gpu.devices] == [("gpu", 0), ("ib", 0)]
    text = _text(containers.table(report))
    assert "1 containers" in text and "team-a/train-0" in text and "mlx5_0" in text
    (row,) = containers.to_json(report)
    devices = row["devices"]
    assert isinstance(devices, dict)
    assert [d["id"] for d in devices["gpu"]] == [0]
    assert [d["name"] for d in devices["infiniband"]] == ["mlx5_0"]
    everything = _read(mi300x, containerd, everything=True)
    assert [c.id for c in everything.containers] == ["listed-gpu", "listed-plain"]


def test_an_unreachable_containerd_is_a_clear_error(mi300x: HostTree, tmp_path: Path) -> None:
    diagnostic = containers.diagnostic(
        HostConfig(root=str(mi300x.root)),
        ContainersConfig(
            namespace="k8s.io",
            all_containers=False,
            containerd_address=str(tmp_path / "none.sock"),
            pod_resources_socket="",
        ),
    )
    with pytest.raises(errors.SourceError, match="containerd"):
        diagnostic.read()
    with pytest.raises(errors.ConfigError, match=r"containers\.containerd_address"):
        containers.diagnostic(
            HostConfig(root=str(mi300x.root)),
            ContainersConfig(
                namespace="k8s.io",
                all_containers=False,
                containerd_address="",
                pod_resources_socket="",
            ),
        )


def _lens(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lens", *args], capture_output=True, text=True, timeout=60, cwd=REPO
    )


def test_the_command_prints_a_table_json_or_an_error(
    mi300x: HostTree, containerd: PrivateContainerd, running: None, tmp_path: Path
) -> None:
    common = ["containers", "--host-root", str(mi300x.root), "--address", containerd.socket]
    table = _lens(*common)
    assert table.returncode == 0, table.stderr
    assert "listed-gpu" in table.stdout and "listed-plain" not in table.stdout
    document = json.loads(_lens(*common, "--json", "--all").stdout)
    assert [c["id"] for c in document] == ["listed-gpu", "listed-plain"]
    assert document[0]["pod_name"] == "train-0" and document[0]["status"] == "Running"
    missing = _lens("containers", "--address", str(tmp_path / "none.sock"))
    assert missing.returncode == 1
    assert missing.stderr.startswith("lens: containerd unreachable: ")


def test_the_kubelets_allocation_names_the_gpus(
    mi300x: HostTree, containerd: PrivateContainerd, running: None, tmp_path: Path
) -> None:
    socket = tmp_path / "kubelet.sock"
    pod = {
        "metadata": {"uid": "uid-0", "name": "train-0", "namespace": "team-a"},
        "spec": {"containers": [{"name": "worker", "resources": {"limits": {"amd.com/gpu": 1}}}]},
    }
    allocator = DeviceAllocator({"amd.com/gpu": [Device(mi300x.node.gpus[2].bdf, 0)]})
    kubelet = podresources.serve(socket, lambda: [pod], allocator)
    try:
        report = containers.diagnostic(
            HostConfig(root=str(mi300x.root)),
            ContainersConfig(
                namespace="k8s.io",
                all_containers=False,
                pod_resources_socket=str(socket),
                containerd_address=containerd.socket,
            ),
        ).read()
    finally:
        kubelet.stop(grace=0).wait(5)
    (gpu,) = report.containers
    assert [(d.type, d.number) for d in gpu.devices] == [("gpu", 2), ("ib", 0)]


def test_docker_containers_are_listed_too_when_configured(
    mi300x: HostTree,
    containerd: PrivateContainerd,
    running: None,
    docker: PrivateDocker,
    device_nodes: dict[str, Path],
    tmp_path: Path,
) -> None:
    labels = {"io.kubernetes.pod.name": "infer-0", "io.kubernetes.container.name": "server"}
    devices = [device_nodes["render"], device_nodes["uverbs"]]
    started = docker.run("docked-gpu", ["sleep", "60"], labels=labels, devices=devices, detach=True)
    try:
        assert started.returncode == 0, started.stderr
        report = containers.diagnostic(
            HostConfig(root=str(mi300x.root)),
            ContainersConfig(
                namespace="k8s.io",
                all_containers=False,
                docker_address=docker.socket,
                containerd_address=containerd.socket,
                pod_resources_socket="",
            ),
        ).read()
        assert report.problems == ()
        by_name = {c.name: c for c in report.containers}
        assert set(by_name) == {"worker", "server"}
        docked = by_name["server"]
        assert report.sources[docked.id] is Source.DOCKER
        assert report.sources[by_name["worker"].id] is Source.CONTAINERD
        assert [(d.type, d.number) for d in docked.devices] == [("gpu", 0), ("ib", 0)]
        text = " ".join(_text(containers.table(report)).split())  # the caption may wrap
        assert "Runtime" in text and f"Docker at {docker.socket}" in text
        listed = json.loads(
            _lens(
                "containers",
                "--host-root",
                str(mi300x.root),
                "--address",
                containerd.socket,
                "--docker-address",
                docker.socket,
                "--json",
            ).stdout
        )
        assert {c["name"] for c in listed} == {"worker", "server"}
    finally:
        docker.remove("docked-gpu")
    gone = containers.diagnostic(
        HostConfig(root=str(mi300x.root)),
        ContainersConfig(
            namespace="k8s.io",
            all_containers=False,
            docker_address=str(tmp_path / "no-docker.sock"),
            containerd_address=containerd.socket,
            pod_resources_socket="",
        ),
    ).read()
    assert [c.name for c in gone.containers] == ["worker"]
    (problem,) = gone.problems
    assert problem.startswith("Docker unreachable: ")
