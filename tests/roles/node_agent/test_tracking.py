"""End to end with a real containerd: agent and jobs processes, kills and restarts, exactly once.

Every container lifecycle the test drives must reach node_container_events exactly once per
event type, on SQLite and PostgreSQL, while the jobs server and the agent are killed (SIGKILL)
and restarted mid-stream.
"""

from __future__ import annotations

import asyncio
import struct
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import peewee
import pytest

from lens.devices.sysfs import HostFiles
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.roles.node_agent.state import AgentState
from lens.roles.node_agent.tracking import ContainerTracking, DeviceTable
from lens.runtime import errors
from lens.runtime.config import ContainersConfig, DatabaseConfig
from lens.runtime.selfmetrics import SelfMetrics
from lens.sim.containerd import PrivateContainerd, pod_labels
from lens.sim.docker import PrivateDocker, ScriptedDocker
from lens.sim.hosts.tree import HostTree
from lens.sim.kubelet import podresources
from lens.sim.kubelet.devices import Device, DeviceAllocator
from lens.store import database, models
from tests.roles.node_agent.processes import Pipeline, get

pytestmark = pytest.mark.slow_timeout

LIFECYCLE = ["Created", "Running", "Exit", "Deleted"]
JOURNALED_LIFECYCLE = {pb.EVENT_TYPE_CREATED, pb.EVENT_TYPE_STARTED, pb.EVENT_TYPE_EXITED,
                       pb.EVENT_TYPE_DELETED}  # fmt: skip


@pytest.fixture
def pipeline(
    mi300x: HostTree,
    containerd: PrivateContainerd,
    empty_database_url: str,
    tmp_path: Path,
    free_port: Callable[[], int],
) -> Iterator[Pipeline]:
    built = Pipeline(
        tree=mi300x,
        ctd=containerd,
        url=empty_database_url,
        tmp=tmp_path,
        ports=[free_port(), free_port(), free_port()],
    )
    try:
        yield built
    finally:
        built.agent.stop()
        built.jobs.stop()


def _events(url: str) -> Counter[tuple[str, str]]:
    db = database.open_database(DatabaseConfig(url=url))
    try:
        with database.session(db):
            query = models.NodeContainerEvent.select()
            return Counter((e.container_id, e.event_type) for e in query)
    finally:
        db.close()


def _rows(url: str, model: type[models.LensModel]) -> list[peewee.Model]:
    db = database.open_database(DatabaseConfig(url=url))
    try:
        with database.session(db):
            return list(model.select())
    finally:
        db.close()


class Driver:
    """Runs containers on the private containerd and remembers what must reach the database."""

    def __init__(self, ctd: PrivateContainerd, devices: list[Path]) -> None:
        self.ctd, self.devices = ctd, devices
        self.expected: dict[str, list[str]] = {}

    def labels(self, name: str) -> dict[str, str]:
        return pod_labels(
            pod=f"pod-{name}", namespace="team-a", uid=f"uid-{name}", container="main"
        )

    def run(self, name: str, *, code: int = 0) -> None:
        done = self.ctd.run(
            name, ["sh", "-c", f"exit {code}"], labels=self.labels(name), devices=self.devices
        )
        assert done.returncode == code, done.stderr
        self.expected[name] = LIFECYCLE

    def run_out_of_memory(self, name: str) -> None:
        self.ctd.run(
            name,
            ["sh", "-c", "tail /dev/zero"],
            labels=self.labels(name),
            devices=self.devices,
            memory_limit=16 << 20,
        )
        self.expected[name] = ["Created", "Running", "OOMKilled", "Exit", "Deleted"]


def _committed(url: str, expected: dict[str, list[str]]) -> bool:
    events = _events(url)
    return all(events[(name, kind)] for name, kinds in expected.items() for kind in kinds)


@pytest.mark.parametrize("database_engine", ["sqlite", "postgresql", "mysql"], indirect=True)
def test_every_container_event_reaches_the_database_exactly_once(
    pipeline: Pipeline,
    containerd: PrivateContainerd,
    device_nodes: dict[str, Path],
    empty_database_url: str,
    eventually: Callable[..., None],
) -> None:
    p = pipeline
    drive = Driver(containerd, [device_nodes["render"], device_nodes["uverbs"]])
    p.start(eventually)
    # Everything up.
    for i in range(3):
        drive.run(f"a{i}", code=i)
    drive.run_out_of_memory("a-oom")
    assert containerd.run("no-devices", ["true"], labels=drive.labels("x")).returncode == 0
    eventually(lambda: _committed(empty_database_url, drive.expected), timeout=30)
    # The server killed mid-stream: the agent keeps the events and resends them.
    p.jobs.kill()
    for i in range(3):
        drive.run(f"b{i}", code=3)
    p.jobs.start()
    eventually(lambda: _committed(empty_database_url, drive.expected), timeout=30)
    # Both down: the agent is killed with unacknowledged events; its journal keeps them.
    p.jobs.kill()
    for i in range(3):
        drive.run(f"c{i}", code=4)
    # Killed once its journal holds them: events the agent had not yet taken from containerd
    # are gone with it (containerd does not replay them), which is not what this tests.
    lifecycles = {f"c{i}": JOURNALED_LIFECYCLE for i in range(3)}
    eventually(lambda: _journaled(p.journal_dir, lifecycles), timeout=30)
    p.agent.kill()
    p.agent.start()
    p.jobs.start()
    eventually(lambda: _committed(empty_database_url, drive.expected), timeout=30)
    _check_exactly_once(empty_database_url, drive.expected)
    _check_rows(empty_database_url, drive.expected)


def _journaled(directory: Path, expected: dict[str, set[int]]) -> bool:
    """Whether the agent's journal (tests of the format: tests/containers/node/test_journal.py)
    holds, whole, every expected event type of each container."""
    found: set[tuple[str, int]] = set()
    for path in directory.glob("*.seg"):
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # acknowledged and deleted meanwhile
            continue
        offset = 0
        while offset + 4 <= len(data):
            (length,) = struct.unpack_from("<I", data, offset)
            body = data[offset + 4 : offset + 4 + length]
            if len(body) < length:
                break  # being written
            record = pb.Record.FromString(body)
            if record.WhichOneof("body") == "event":
                found.add((record.event.container_id, record.event.type))
            offset += 4 + length
    return all((name, kind) in found for name, kinds in expected.items() for kind in kinds)


def _check_exactly_once(url: str, expected: dict[str, list[str]]) -> None:
    events = _events(url)
    for name, kinds in expected.items():
        got = {
            kind: events[(name, kind)]
            for kind in ("Created", "Running", "Exit", "OOMKilled", "Deleted")
        }
        assert got == {k: int(k in kinds) for k in got}, name
    assert not [key for key in events if key[0] == "no-devices"]


def _check_rows(url: str, expected: dict[str, list[str]]) -> None:
    containers = {r.container_id: r for r in _rows(url, models.NodeContainer)}
    assert set(containers) == set(expected)
    a1 = containers["a1"]
    assert (a1.container_name, a1.pod_name, a1.pod_namespace, a1.pod_uid) == (
        "main",
        "pod-a1",
        "team-a",
        "uid-a1",
    )
    assert (a1.node_name, a1.source, a1.status, a1.exit_code) == ("gpu-node-1", "k8s", "Deleted", 1)
    assert containers["a-oom"].exit_code == 137
    devices = [
        (d.device_type, d.device_no)
        for d in _rows(url, models.NodeContainerDevice)
        if d.container_id == "a1"
    ]
    assert sorted(devices) == [("gpu", 0), ("ib", 0)]


@pytest.mark.parametrize("database_engine", ["sqlite", "postgresql", "mysql"], indirect=True)
def test_pods_shows_live_containers_and_an_inventory_closes_those_gone_while_the_agent_was_down(
    pipeline: Pipeline,
    containerd: PrivateContainerd,
    device_nodes: dict[str, Path],
    empty_database_url: str,
    eventually: Callable[..., None],
) -> None:
    p = pipeline
    drive = Driver(containerd, [device_nodes["card"], device_nodes["render"]])
    p.start(eventually)
    started = containerd.run(
        "long", ["sleep", "600"], labels=drive.labels("long"), devices=drive.devices, detach=True
    )
    assert started.returncode == 0, started.stderr
    try:
        eventually(
            lambda: _committed(empty_database_url, {"long": ["Created", "Running"]}), timeout=30
        )
        status, pods = get(p.agent_http, "/v1/pods")
        assert status == 200 and isinstance(pods, list)
        (long,) = [c for c in pods if c["id"] == "long"]
        assert (long["pod_name"], long["status"], long["devices"]["infiniband"]) == (
            "pod-long",
            "Running",
            [],
        )
        assert [d["id"] for d in long["devices"]["gpu"]] == [0]  # card1 and renderD128: one GPU
        p.agent.kill()
    finally:
        containerd.kill_and_delete("long")
    p.agent.start()
    eventually(lambda: _committed(empty_database_url, {"long": ["Deleted"]}), timeout=30)
    events = _events(empty_database_url)
    assert [events[("long", k)] for k in ("Created", "Running", "Deleted")] == [1, 1, 1]
    (row,) = [
        r for r in _rows(empty_database_url, models.NodeContainer) if r.container_id == "long"
    ]
    assert row.status == "Deleted"


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_the_kubelets_allocation_decides_which_gpus_a_container_holds(
    pipeline: Pipeline,
    mi300x: HostTree,
    containerd: PrivateContainerd,
    device_nodes: dict[str, Path],
    empty_database_url: str,
    eventually: Callable[..., None],
) -> None:
    """A privileged-style spec names GPU 0's nodes; the kubelet gave the container GPU 2."""
    p = pipeline
    bdfs = [gpu.bdf for gpu in mi300x.node.gpus]
    allocator = DeviceAllocator({"amd.com/gpu": [Device(bdfs[2], 0), Device(bdfs[3], 0)]})
    pod = {
        "metadata": {"uid": "uid-alloc", "name": "pod-alloc", "namespace": "team-a"},
        "spec": {"containers": [{"name": "main", "resources": {"limits": {"amd.com/gpu": "1"}}}]},
    }
    kubelet = podresources.serve(p.pod_resources_socket, lambda: [pod], allocator)
    try:
        p.start(eventually)
        labels = pod_labels(pod="pod-alloc", namespace="team-a", uid="uid-alloc", container="main")
        devices = [device_nodes["card"], device_nodes["render"], device_nodes["uverbs"]]
        started = containerd.run(
            "alloc", ["sleep", "60"], labels=labels, devices=devices, detach=True
        )
        assert started.returncode == 0, started.stderr
        try:
            eventually(lambda: _committed(empty_database_url, {"alloc": ["Running"]}), timeout=30)
            _, pods = get(p.agent_http, "/v1/pods")
            assert isinstance(pods, list)
            (alloc,) = [c for c in pods if c["id"] == "alloc"]
            assert [d["id"] for d in alloc["devices"]["gpu"]] == [2]
            assert [d["id"] for d in alloc["devices"]["infiniband"]] == [0]
            stored = sorted(
                (d.device_type, d.device_no)
                for d in _rows(empty_database_url, models.NodeContainerDevice)
                if d.container_id == "alloc"
            )
            assert stored == [("gpu", 2), ("ib", 0)]
        finally:
            containerd.kill_and_delete("alloc")
    finally:
        kubelet.stop(grace=0).wait(5)


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_docker_containers_are_followed_as_a_second_source(
    pipeline: Pipeline,
    docker: PrivateDocker,
    containerd: PrivateContainerd,
    device_nodes: dict[str, Path],
    empty_database_url: str,
    eventually: Callable[..., None],
) -> None:
    p = pipeline
    p.agent.env["LENS_CONTAINERS__DOCKER_ADDRESS"] = docker.socket
    p.start(eventually)
    ran = docker.run(
        "d-train", ["sh", "-c", "exit 5"], devices=[device_nodes["render"], device_nodes["uverbs"]]
    )
    assert ran.returncode == 5, ran.stderr
    (cid,) = docker.docker(
        "ps", "--all", "--quiet", "--no-trunc", "--filter", "name=d-train"
    ).stdout.split()
    docker.remove("d-train")
    eventually(
        lambda: _committed(empty_database_url, {cid: ["Created", "Running", "Exit", "Deleted"]}),
        timeout=30,
    )
    (row,) = [r for r in _rows(empty_database_url, models.NodeContainer) if r.container_id == cid]
    assert (row.source, row.container_name, row.exit_code, row.status) == (
        "docker",
        "d-train",
        5,
        "Deleted",
    )
    devices = sorted(
        (d.device_type, d.device_no)
        for d in _rows(empty_database_url, models.NodeContainerDevice)
        if d.container_id == cid
    )
    assert devices == [("gpu", 0), ("ib", 0)]


def test_readiness_names_why_a_runtime_is_not_followed_until_it_is_again(
    host: HostFiles, tmp_path_factory: pytest.TempPathFactory, eventually: Callable[..., None]
) -> None:
    """While a watcher starts over (here: Docker answers its listing with no list), the
    `containers` check fails and says why."""
    scripted = ScriptedDocker(tmp_path_factory.mktemp("sd") / "docker.sock")
    scripted.listing = {"not": "a list"}
    scripted.start()
    failures: list[BaseException] = []
    tracking = ContainerTracking(
        containers=ContainersConfig(
            containerd_address="", docker_address=scripted.socket, pod_resources_socket=""
        ),
        emit=lambda record: None,
        host_root=str(host.root),
        lookup=DeviceTable(host, AgentState(time.time)),
        metrics=SelfMetrics(process=False),
        fail=failures.append,
    )
    tracking.devices_known()
    asyncio.run(tracking.start())
    try:
        with pytest.raises(errors.NoDataError, match="not subscribed to docker at"):
            tracking.check_subscribed()

        def names_the_reason() -> bool:
            try:
                tracking.check_subscribed()
            except errors.NoDataError as exc:
                return "(docker /containers/json did not answer a list)" in str(exc)
            return False

        eventually(names_the_reason, timeout=10)
        scripted.listing = None
        eventually(lambda: not names_the_reason() and scripted.subscribers == 1, timeout=35)
        tracking.check_subscribed()
    finally:
        asyncio.run(tracking.stop())
        scripted.stop()
    assert failures == []
