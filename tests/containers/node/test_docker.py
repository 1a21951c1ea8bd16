"""Docker Engine as a container source: its records, devices and events, against a real dockerd."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from lens.containers.node import spec
from lens.containers.node.docker import DockerClient, parse_event, parse_time
from lens.containers.node.records import RuntimeEvent
from lens.runtime import errors
from lens.sim.docker import PrivateDocker

pytestmark = pytest.mark.slow_timeout


def test_times_and_events_as_docker_writes_them() -> None:
    assert parse_time("0001-01-01T00:00:00Z") is None
    assert parse_time("2026-11-21T03:03:04.79935926Z") == pytest.approx(1795230184.79935926)
    assert parse_time("2026-11-21T04:03:04+01:00") == 1795230184.0
    with pytest.raises(errors.SourceError, match="unreadable"):
        parse_time("yesterday")
    die = {
        "status": "die",
        "id": "8aec0c17563d",
        "Type": "container",
        "Action": "die",
        "Actor": {"ID": "8aec0c17563d", "Attributes": {"exitCode": "137", "name": "oom1"}},
        "time": 1795230203,
        "timeNano": 1795230203454553106,
    }
    event = parse_event(die)
    assert event == RuntimeEvent(
        topic="/tasks/exit",
        container_id="8aec0c17563d",
        time=1795230203.454553106,
        exit_status=137,
        exited_at=1795230203.454553106,
    )
    assert parse_event({**die, "Action": "attach"}) is None
    assert parse_event({**die, "Type": "network"}) is None


def _client(docker: PrivateDocker, root: str = "/") -> DockerClient:
    return DockerClient(docker.socket, host_root=root, timeout_seconds=10)


def test_containers_come_with_their_device_numbers_labels_and_exit(
    docker: PrivateDocker, device_nodes: dict[str, Path]
) -> None:
    client = _client(docker)
    labels = {"io.kubernetes.pod.name": "p", "io.kubernetes.container.name": "worker"}
    devices = [device_nodes["render"], device_nodes["uverbs"]]
    started = docker.run("d-gpu", ["sleep", "60"], labels=labels, devices=devices, detach=True)
    finished = docker.run("d-exit", ["sh", "-c", "exit 3"])
    try:
        assert started.returncode == 0, started.stderr
        assert finished.returncode == 3, finished.stderr
        records = {r.name: r for r in client.list_containers()}
        gpu = records["d-gpu"]
        assert gpu.labels["io.kubernetes.pod.name"] == "p" and gpu.created_at > 0
        assert spec.container_name(gpu.id, gpu.labels, gpu.name) == "worker"
        found = [(d.major, d.minor) for d in spec.parse_spec_devices(gpu.spec)]
        assert found == [(226, 128), (231, 192)]
        tasks = client.list_tasks()
        assert tasks[gpu.id].status == "running"
        exited = tasks[records["d-exit"].id]
        assert (exited.status, exited.exit_status) == ("stopped", 3)
        assert exited.exited_at is not None and exited.exited_at >= records["d-exit"].created_at
        assert client.get_container("no-such-container") is None
    finally:
        docker.remove("d-gpu")
        docker.remove("d-exit")


def test_a_directory_of_devices_and_a_privileged_container(
    docker: PrivateDocker, device_nodes: dict[str, Path], tmp_path: Path
) -> None:
    """`--device /dev/dri` stands for every node under it; privileged means all of them."""
    root = tmp_path / "host"
    (root / "dev" / "dri").mkdir(parents=True)
    (root / "dev" / "dri" / "renderD128").symlink_to(device_nodes["render"])
    (root / "dev" / "infiniband").mkdir()
    (root / "dev" / "infiniband" / "uverbs0").symlink_to(device_nodes["uverbs"])
    client = DockerClient(docker.socket, host_root=str(root), timeout_seconds=10)
    host = {"Devices": [{"PathOnHost": "/dev/dri", "PathInContainer": "/dev/dri"}]}
    assert [(d["path"], d["major"]) for d in client.spec_devices(host)] == [
        ("/dev/dri/renderD128", 226)
    ]
    privileged = client.spec_devices({"Privileged": True})
    assert [(d["major"], d["minor"]) for d in privileged] == [(226, 128), (231, 192)]
    nvidia = client.spec_devices({"DeviceRequests": [{"Driver": "nvidia", "DeviceIDs": ["1"]}]})
    assert nvidia == [{"path": "/dev/nvidia1", "type": "c", "major": 195, "minor": 1}]


def test_events_of_a_container_killed_for_memory(docker: PrivateDocker) -> None:
    client = _client(docker)
    stream = client.subscribe()
    seen: list[RuntimeEvent] = []

    def follow() -> None:
        for event in stream:
            seen.append(event)
            if event.topic == "/containers/delete":
                return

    follower = threading.Thread(target=follow)
    follower.start()
    try:
        ran = docker.run("d-oom", ["sh", "-c", "tail /dev/zero"], memory_limit=16 << 20)
        assert ran.returncode == 137, ran.stderr
        docker.remove("d-oom")
        follower.join(20)
    finally:
        stream.cancel()
        follower.join(5)
    topics = [e.topic for e in seen]
    # Docker tells of the OOM kill (once or more) before or after the exit it caused.
    assert topics[:2] == ["/containers/create", "/tasks/start"], json.dumps(topics)
    middle = topics[2:-1]
    assert middle.count("/tasks/exit") == 1 and set(middle) == {"/tasks/exit", "/tasks/oom"}
    assert topics[-1] == "/containers/delete", json.dumps(topics)
    (exit_,) = [e for e in seen if e.topic == "/tasks/exit"]
    assert exit_.exit_status == 137
    assert len({e.container_id for e in seen}) == 1


def test_an_unreachable_docker_is_a_source_error(tmp_path: Path) -> None:
    client = DockerClient(str(tmp_path / "none.sock"), host_root="/", timeout_seconds=1)
    with pytest.raises(errors.SourceError, match="docker at"):
        client.list_containers()
    with pytest.raises(errors.SourceError, match="docker at"):
        client.subscribe()
