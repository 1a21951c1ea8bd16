"""A real Prometheus (Debian's 2.42, remote write 1.0) scrapes Lens's node agents on two
simulated MI300X nodes and remote-writes to `lens jobs`, which forwards to a target: every GPU
series arrives there with the workload labels of the pod holding that GPU on that node, as the
store says over a workload's life — unlabelled before its pod holds the GPU, labelled while it
does, still labelled for telemetry.enrichment_ended_grace_seconds after the pod ended, then
unlabelled; the pod recreated on another node labels that node's GPUs, never the first node's
GPUs at the same PCI addresses.

The store is written by Lens's own writers (tests/telemetry/enrichment/clusterrows.py): the
nodes' GPUs as gpu_devices rows with the simulated GPUs' own PCI addresses, serials and uuids
(the HostTree's identities, which the agents read from its sysfs), the pods as the controller
records them, their containers and the GPUs they hold as the event server records an agent's
container events.
"""

from __future__ import annotations

import contextlib
import datetime
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lens.containers.model import EventType
from lens.kube.machinery.cache import JsonObject
from lens.runtime.clock import FakeClock
from lens.runtime.config import TelemetryConfig
from lens.sim.hosts.state import NodeSpec
from lens.sim.hosts.tree import HostTree
from lens.store import database
from tests.conftest import RunningJobs, StartJobs
from tests.roles.jobs.remotewritelab import (
    Arrival,
    Arrivals,
    GpuKey,
    Labels,
    RunningAgent,
    forwarding_prometheus,
    gpu_of,
)
from tests.telemetry.enrichment.clusterrows import Clock, LabCluster, workload_object
from tests.telemetry.remotewrite.target import Target

pytestmark = pytest.mark.slow_timeout

REFRESH_SECONDS = 0.5
GRACE_SECONDS = 3.0
# An ended pod's labels go at the first refresh `GRACE_SECONDS` after the refresh that read
# its end, which may have begun a little before the end was written.
GRACE_TOLERANCE = 2 * REFRESH_SECONDS
WAIT_SECONDS = 20.0  # for a change in the store to show at the target
NODE_1, NODE_2 = "gpu-node-1", "gpu-node-2"  # the mi300x fixture's node; one made here
JOB_UID = "6f0c3a52-1d7e-4b8e-9a41-2c5d8e7f9b10"
POD_A = "0b4f6e2a-93c1-4d57-8e2f-7a1b3c5d9e01"  # trainer-0 on gpu-node-1
POD_B = "d2a8c4e6-5b13-4f79-a0c2-8e4d6b1f3a02"  # trainer-0 recreated on gpu-node-2

Picture = dict[GpuKey, set[Labels]]


class WallClock(Clock):
    """The writers' clock is the real one: lens jobs' enrichment finds the rows changed since
    its last read by their stamps, against its own (real) clock."""

    def __call__(self) -> datetime.datetime:
        return datetime.datetime.now(datetime.UTC)


def labels_of(pod_uid: str) -> Labels:
    """What a series of a GPU that trainer-0 holds carries: the pod, and the PyTorchJob `llama`
    of team vision above it."""
    labels = {
        "pod": "trainer-0",
        "namespace": "ml",
        "pod_uid": pod_uid,
        "workload_kind": "PyTorchJob",
        "workload_name": "llama",
        "workload_uid": JOB_UID,
        "team": "vision",
    }
    return tuple(sorted(labels.items()))


class Cluster:
    """The cluster as the store tells it, written by Lens's own writers."""

    def __init__(self, running: RunningJobs, trees: dict[str, HostTree]) -> None:
        self.db = running.jobs.db
        self.trees = trees
        self.lab = LabCluster(self.db, WallClock())
        self.job = workload_object(JOB_UID, "PyTorchJob", name="llama", labels={"team": "vision"})
        self._held: dict[str, list[tuple[int, str]]] = {}
        with database.session(self.db):
            for node, tree in trees.items():
                # An AMD GPU's uuid is its sysfs unique_id, for the agent and its reports alike.
                gpus = [(g.index, g.unique_id, g.bdf, g.serial) for g in tree.node.gpus]
                self.lab.gpus(node, gpus)
            self.lab.workloads([self.job])

    def start(self, uid: str, node: str, gpus: list[int]) -> JsonObject:
        """trainer-0 bound to `node` and running, its container holding those GPUs."""
        held = [(i, self.trees[node].node.gpus[i].unique_id) for i in gpus]
        self._held[uid] = held
        with database.session(self.db):
            pod = self.lab.pod(uid, name="trainer-0", node=node, owner=self.job, gpus=len(gpus))
            self.lab.workloads([self.job])
            self.lab.container(pod, node=node, container_id=f"c-{uid}", gpus=held)
        return pod

    def end(self, pod: JsonObject, *, deleted: bool) -> None:
        """The pod's container exited, and the pod Succeeded or was deleted (evicted)."""
        uid = str(pod["metadata"]["uid"])
        node = str(pod["spec"]["nodeName"])
        with database.session(self.db):
            held = self._held[uid]
            exited = EventType.EXITED
            self.lab.container(pod, node=node, container_id=f"c-{uid}", gpus=held, event=exited)
            if deleted:
                self.lab.delete(pod)
            else:
                self.lab.finish(pod)
            self.lab.workloads([self.job])

    def picture(self, held: dict[GpuKey, Labels]) -> Picture:
        """Every GPU of both nodes with the labels of its series: `held` ones those given, the
        others none."""
        return {
            (node, str(gpu.index)): {held.get((node, str(gpu.index)), ())}
            for node, tree in self.trees.items()
            for gpu in tree.node.gpus
        }


@pytest.fixture
def second_node(memory_dir: Path, clock: FakeClock) -> HostTree:
    """Four MI300X: its GPUs sit at the same PCI addresses as gpu-node-1's first four."""
    spec = NodeSpec(name=NODE_2, gpus=4, rdma=0)
    return HostTree(memory_dir / NODE_2, spec, clock=clock).build()


@pytest.fixture
def chain(
    start_jobs: StartJobs,
    target: Target,
    mi300x: HostTree,
    second_node: HostTree,
    clock: FakeClock,
    tmp_path: Path,
    free_port: Callable[[], int],
    eventually: Callable[..., None],
) -> Iterator[tuple[Cluster, Arrivals]]:
    """lens jobs forwarding to the target, the store's cluster, and a Prometheus scraping both
    nodes' agents and remote-writing to lens jobs; what the target gets."""
    running = start_jobs(
        telemetry=TelemetryConfig(
            remote_write_url=target.url,
            enrichment_refresh_seconds=REFRESH_SECONDS,
            enrichment_ended_grace_seconds=GRACE_SECONDS,
        )
    )
    cluster = Cluster(running, {NODE_1: mi300x, NODE_2: second_node})
    with contextlib.ExitStack() as stack:
        arrivals = Arrivals(target)
        stack.callback(arrivals.stop)
        agents = []
        for tree in cluster.trees.values():
            agents.append(RunningAgent(tree, clock))
            stack.callback(agents[-1].stop)
        write_url = f"http://127.0.0.1:{running.jobs.process.http.port}/api/v1/write"
        prometheus = forwarding_prometheus(
            tmp_path, port=free_port(), agents=agents, write_url=write_url
        )
        stack.callback(prometheus.stop)
        eventually(prometheus.ready, timeout=30)
        yield cluster, arrivals


def _reaches(eventually: Callable[..., None], arrivals: Arrivals, wanted: Picture) -> None:
    """Wait until the latest arrival of every GPU's every series carries what `wanted` says."""
    try:
        eventually(lambda: arrivals.by_gpu() == wanted, timeout=WAIT_SECONDS)
    except AssertionError:
        assert arrivals.by_gpu() == wanted


def _identities(arrivals: Arrivals) -> dict[GpuKey | None, tuple[str, str, str]]:
    """Each GPU's PCI address, serial and uuid, as its lens_gpu_info series says."""
    return {
        gpu_of(own): (labels["pci_bus_id"], labels["serial"], labels["uuid"])
        for own in arrivals.series()
        if (labels := dict(own))["__name__"] == "lens_gpu_info"
    }


def _kept_for_grace(history: list[Arrival], labels: Labels, *, ended_at: float) -> None:
    """The GPU's series kept the ended pod's labels for the grace, then lost them."""
    after = [a for a in history if a.at >= ended_at]
    assert {a.added for a in after} == {labels, ()}
    gone = min(a.at for a in after if a.added == ())
    assert gone >= ended_at + GRACE_SECONDS - GRACE_TOLERANCE, gone - ended_at


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_prometheus_series_reach_the_target_with_the_workload_of_their_gpu(
    chain: tuple[Cluster, Arrivals], eventually: Callable[..., None]
) -> None:
    cluster, arrivals = chain
    first, second = cluster.trees[NODE_1].node.gpus, cluster.trees[NODE_2].node.gpus
    assert [g.bdf for g in first[:2]] == [g.bdf for g in second[:2]]  # told apart by node alone

    # Before the job's pod holds a GPU: every series arrives, none labelled.
    _reaches(eventually, arrivals, cluster.picture({}))
    assert arrivals.versions == {"0.1.0"}  # forwarded as remote write 1.0
    # The series name the GPUs as the store does.
    assert _identities(arrivals) == {
        (node, str(g.index)): (g.bdf, g.serial, g.unique_id)
        for node, tree in cluster.trees.items()
        for g in tree.node.gpus
    }

    pod_a = cluster.start(POD_A, NODE_1, [0, 1])
    a = labels_of(POD_A)
    _reaches(eventually, arrivals, cluster.picture({(NODE_1, "0"): a, (NODE_1, "1"): a}))

    # The node is drained: the pod is evicted and the job recreates it on the other node.
    moved_at = time.time()
    cluster.end(pod_a, deleted=True)
    pod_b = cluster.start(POD_B, NODE_2, [0, 1])
    b = labels_of(POD_B)
    _reaches(eventually, arrivals, cluster.picture({(NODE_2, "0"): b, (NODE_2, "1"): b}))
    for gpu in ("0", "1"):
        _kept_for_grace(arrivals.history((NODE_1, gpu)), a, ended_at=moved_at)

    ended_at = time.time()
    cluster.end(pod_b, deleted=False)
    _reaches(eventually, arrivals, cluster.picture({}))
    for gpu in ("0", "1"):
        _kept_for_grace(arrivals.history((NODE_2, gpu)), b, ended_at=ended_at)

    # Over the whole run, no series carried labels of a pod that never held its GPU.
    allowed = {(NODE_1, "0"): a, (NODE_1, "1"): a, (NODE_2, "0"): b, (NODE_2, "1"): b}
    for own, seen in arrivals.series().items():
        key = gpu_of(own)
        may = allowed.get(key, ()) if key is not None else ()
        assert {s.added for s in seen} <= {(), may}, own
