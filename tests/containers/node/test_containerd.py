"""The containerd boundary against a real containerd (private socket, tests/conftest.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from lens.containers.node import containerd as boundary
from lens.containers.node import spec
from lens.runtime import errors
from lens.sim.containerd import PrivateContainerd, pod_labels

pytestmark = pytest.mark.slow_timeout


def _client(ctd: PrivateContainerd) -> boundary.ContainerdClient:
    return boundary.ContainerdClient(ctd.socket, namespace="k8s.io", timeout_seconds=5)


def test_events_of_a_container_that_runs_out_of_memory(
    containerd: PrivateContainerd, device_nodes: dict[str, Path]
) -> None:
    client = _client(containerd)
    events: list[boundary.RuntimeEvent] = []
    records: list[boundary.ContainerRecord | None] = []
    subscription = client.subscribe()

    def follow() -> None:
        for event in subscription:
            if event.container_id != "oom-1":
                continue
            events.append(event)
            if event.topic == "/containers/create":
                records.append(client.get_container("oom-1"))
            if event.topic == "/containers/delete":
                return

    follower = threading.Thread(target=follow)
    follower.start()
    labels = pod_labels(pod="p", namespace="ns", uid="u", container="main")
    # The stream is open once it delivers; a first container makes sure of it.
    containerd.run(
        "oom-1",
        ["sh", "-c", "tail /dev/zero"],
        labels=labels,
        devices=[device_nodes["render"]],
        memory_limit=16 << 20,
    )
    follower.join(20)
    subscription.cancel()
    client.close()
    topics = [e.topic for e in events]
    # One kill may be notified more than once (each change of the cgroup's memory.events).
    assert [t for i, t in enumerate(topics) if i == 0 or t != topics[i - 1]] == [
        "/containers/create",
        "/tasks/start",
        "/tasks/oom",
        "/tasks/exit",
        "/tasks/delete",
        "/containers/delete",
    ]
    exit_, delete = (events[topics.index(t)] for t in ("/tasks/exit", "/tasks/delete"))
    assert (exit_.exit_status, exit_.exec_id) == (137, "oom-1")
    assert exit_.exited_at is not None and exit_.exited_at == delete.exited_at
    (record,) = records
    assert record is not None and record.labels["io.kubernetes.container.name"] == "main"
    assert [(d.major, d.minor) for d in spec.parse_spec_devices(record.spec)] == [(226, 128)]


def test_listing_shows_a_running_container_and_its_task(containerd: PrivateContainerd) -> None:
    client = _client(containerd)
    assert containerd.run("listed-1", ["sleep", "60"], detach=True).returncode == 0
    try:
        (record,) = [c for c in client.list_containers() if c.id == "listed-1"]
        assert record.created_at > 0 and record.image
        task = client.list_tasks()["listed-1"]
        assert (task.status, task.exited_at) == ("running", None) and task.pid > 0
        assert client.get_container("no-such-container") is None
    finally:
        containerd.kill_and_delete("listed-1")
        client.close()


def test_an_unreachable_containerd_is_a_source_error(tmp_path: Path) -> None:
    client = boundary.ContainerdClient(
        str(tmp_path / "none.sock"), namespace="k8s.io", timeout_seconds=0.5
    )
    with pytest.raises(errors.SourceError, match="containerd list containers: UNAVAILABLE"):
        client.list_containers()
    with pytest.raises(errors.SourceError, match="event stream"):
        list(client.subscribe())
    client.close()
