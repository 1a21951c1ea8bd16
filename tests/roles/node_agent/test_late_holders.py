"""GPU time learnt late is not lost (issue 36, item 12): a container the node agent learns of
only after minutes it held GPUs in were sent gets those seconds, stored once, in its minutes,
hours and day.

One process: the agent's cycle on a fake clock at 1 s a cycle, following a Docker stand-in that
runs the pod's container at the times of a scenario's hold (lens/sim/scenario/runtimes.py, as
`lens demo` does: the container lists no device, so only the kubelet's pod-resources names its
GPUs), a simulated kubelet whose pod-resources is down for a while, and a real `lens jobs`
storing what arrives. What is stored is checked against the hold the simulator enacted. Nothing
depends on how fast the host runs: the clock moves only when the test moves it, and the test
waits (without a deadline on the figures) for the agent to have seen each runtime event.
"""

from __future__ import annotations

import asyncio
import datetime
import math
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lens.reports.storing import hours
from lens.roles.node_agent.main import NodeAgent
from lens.roles.node_agent.tracking import ContainerTracking
from lens.runtime import errors
from lens.runtime.clock import FakeClock
from lens.runtime.config import ContainersConfig, EventsConfig
from lens.sim.hosts.tree import HostTree
from lens.sim.kubelet import podresources
from lens.sim.kubelet.devices import Device, DeviceAllocator
from lens.sim.scenario.runtimes import ScriptedRuntime
from lens.sim.scenario.truth import DELETED, Hold, WorkloadRef
from lens.store import database, models
from lens.usage import gpuhours
from tests.conftest import RunningJobs, StartJobs
from tests.roles.node_agent.conftest import MakeAgent

pytestmark = pytest.mark.slow_timeout

LEAD = 5  # seconds the agent runs before its first whole minute
GPUS = (2, 5)  # the pod's GPUs, indices of the host tree
WAIT_SECONDS = 60.0  # for the agent's threads: generous, a loaded host is slow
CLUSTER = "default"  # the jobs' (tests/conftest.py start_jobs)


@pytest.fixture
def clock() -> FakeClock:
    """A few seconds before a whole minute ten minutes ago (the server takes minutes from the
    last days only)."""
    return FakeClock(start_time=float(math.floor(time.time() / 60) * 60 - 600 - LEAD))


def _wait(what: str, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not done():
        assert time.monotonic() < deadline, f"waited {WAIT_SECONDS} s for {what}"
        time.sleep(0.02)


class Node:
    """The agent on `tree` following `runtime`, the kubelet's pod-resources switchable off."""

    def __init__(self, agent: NodeAgent, tree: HostTree, clock: FakeClock) -> None:
        self.agent, self.tree, self.clock = agent, tree, clock
        self.following = False

    @property
    def tracking(self) -> ContainerTracking:
        assert self.agent.tracking is not None
        return self.agent.tracking

    def follow(self) -> None:
        """Container tracking started, as the agent starts it after its first cycle."""
        asyncio.run(self.tracking.start())

        def subscribed() -> bool:
            try:
                self.tracking.check_subscribed()
            except errors.NoDataError:
                return False
            return True

        _wait("the Docker stand-in followed", subscribed)
        self.following = True

    def run_until(self, end: float, at: dict[float, Callable[[], None]] | None = None) -> None:
        """A cycle a second up to `end` (inclusive); `at`: what happens before a second's cycle.
        Every minute, at :30, the containers are listed again, as the agent's loop does."""
        while (now := self.clock.time()) <= end:
            if at and now in at:
                at[now]()
            if now % 60 == 30 and self.following:
                self.tracking.reconcile()
            self.tree.update()
            self.agent.cycle.run()
            self.clock.advance(1)

    def held(self, cid: str) -> bool:
        return any(c.id == cid for c in self.tracking.containers())


@pytest.fixture
def kubelet_down() -> threading.Event:
    return threading.Event()


POD = WorkloadRef(kind="Pod", name="cron-1", namespace="team-a", uid="uid-cron-1")


def _hold(since: float, until: float | None) -> Hold:
    """The pod holding GPUS from `since` until `until`, deleted at once when it ends (a short
    CronJob's pod)."""
    return Hold(
        pod_uid=POD.uid,
        namespace=POD.namespace,
        pod_name=POD.name,
        workload=POD,
        node="gpu-node-1",
        gpus=GPUS,
        since=since,
        until=until,
        ended_by=DELETED,
    )


@pytest.fixture
def node(
    make_agent: MakeAgent,
    mi300x: HostTree,
    clock: FakeClock,
    start_jobs: StartJobs,
    tmp_path: Path,
    kubelet_down: threading.Event,
) -> Iterator[tuple[Node, ScriptedRuntime, RunningJobs]]:
    bdfs = [gpu.bdf for gpu in mi300x.node.gpus]
    allocator = DeviceAllocator({"amd.com/gpu": [Device(bdfs[i], 0) for i in GPUS]})
    pod = {
        "metadata": {"uid": POD.uid, "name": POD.name, "namespace": POD.namespace},
        "spec": {"containers": [{"name": "main", "resources": {"limits": {"amd.com/gpu": "2"}}}]},
    }
    socket = tmp_path / "pod-resources" / "kubelet.sock"
    kubelet = podresources.serve(socket, lambda: [pod], allocator, unavailable=kubelet_down.is_set)
    runtime = ScriptedRuntime(tmp_path / "docker.sock")
    jobs = start_jobs()
    agent = make_agent(
        mi300x,
        events=EventsConfig(server_address=jobs.address),
        containers=ContainersConfig(
            containerd_address="",
            docker_address=runtime.docker.socket,
            pod_resources_socket=str(socket),
        ),
        collectors=("amdgpu",),
    )
    asyncio.run(agent.stream.start())
    simulated = Node(agent, mi300x, clock)
    try:
        yield simulated, runtime, jobs
    finally:
        if agent.tracking is not None:
            asyncio.run(agent.tracking.stop())
        asyncio.run(agent.stream.stop())
        runtime.stop()
        kubelet.stop(grace=0).wait(5)


def _stored(jobs: RunningJobs, simulated: Node) -> dict[tuple[str, float], float]:
    """Once the server acknowledged everything sent: the seconds the pod held each GPU in each
    minute ((GPU uuid, minute) -> seconds), after checking every stored minute adds up to 60."""
    _wait("the server's acknowledgement", lambda: len(simulated.agent.stream.outbox) == 0)
    seconds: dict[tuple[str, float], float] = defaultdict(float)
    with database.session(jobs.jobs.db):
        for row in models.GpuMinuteReport.select():
            holders = models.GpuMinuteHolder.select().where(
                (models.GpuMinuteHolder.gpu_uuid == row.gpu_uuid)
                & (models.GpuMinuteHolder.minute == row.minute)
            )
            shares = list(holders)
            assert row.holders == len(shares)
            assert row.idle_seconds + sum(h.seconds for h in shares) == pytest.approx(60.0)
            for share in shares:
                seconds[share.gpu_uuid, _epoch(share.minute)] += share.seconds
    return dict(seconds)


def _epoch(at: datetime.datetime) -> float:
    return at.replace(tzinfo=datetime.UTC).timestamp() if at.tzinfo is None else at.timestamp()


def _truth(tree: HostTree, hold: Hold, minutes: list[float]) -> dict[tuple[str, float], float]:
    """What the simulator enacted: the seconds the pod held each of its GPUs in each minute."""
    uuids = [gpu["unique_id"] for gpu in tree.state()["gpus"]]
    return {
        (uuids[i], m): s for i in hold.gpus for m in minutes if (s := hold.held_seconds(m, m + 60))
    }


def _corrections(simulated: Node) -> float | None:
    registry = simulated.agent.process.metrics.registry
    return registry.get_sample_value("lens_reports_corrections_total")


@pytest.mark.parametrize("database_engine", ["sqlite", "postgresql", "mysql"], indirect=True)
def test_a_container_whose_gpus_are_learnt_late_loses_no_gpu_second(
    node: tuple[Node, ScriptedRuntime, RunningJobs], kubelet_down: threading.Event
) -> None:
    """The container runs 150 s from 40 s into the first whole minute. The kubelet's
    pod-resources fails from before it starts until 70 s after: the agent learns its GPUs at the
    next listing, after two of its minutes were sent without it."""
    simulated, runtime, jobs = node
    first = simulated.clock.time() + LEAD
    pod_hold = _hold(first + 40, first + 190)
    assert pod_hold.until is not None
    kubelet_down.set()
    simulated.run_until(simulated.clock.time())  # the first cycle: the node's GPUs known
    simulated.follow()
    cid = ""

    def start() -> None:
        nonlocal cid
        runtime.started(pod_hold)
        (cid,) = runtime.expected

    def end() -> None:
        runtime.ended(pod_hold)
        # Its exit and deletion seen, so they are stamped with their own times.
        _wait("the container's end seen", lambda: not simulated.held(cid))

    simulated.run_until(
        first + 5 * 60,
        at={pod_hold.since: start, pod_hold.since + 70: kubelet_down.clear, pod_hold.until: end},
    )
    # Its first two minutes, on each GPU, were sent again with it.
    assert _corrections(simulated) == 2 * len(GPUS)
    minutes = [first + 60 * k for k in range(-1, 5)]
    stored = _stored(jobs, simulated)
    assert stored == pytest.approx(_truth(simulated.tree, pod_hold, minutes))
    assert sum(stored.values()) == pytest.approx(150.0 * len(GPUS))
    _check_hours_and_days(jobs, pod_hold)


def _check_hours_and_days(jobs: RunningJobs, hold: Hold) -> None:
    """The hourly rollup and the days' GPU-hours have every second too."""
    db = jobs.jobs.db
    now = datetime.datetime.now(datetime.UTC)
    # The hold may straddle midnight: its seconds are then split between two days.
    days = {
        datetime.datetime.fromtimestamp(t, datetime.UTC).date()
        for t in (hold.since, now.timestamp())
    }
    with database.session(db):
        hours.roll_up(db, cluster=CLUSTER, now=now)
        held = models.GpuHourHolder.select().where(models.GpuHourHolder.pod_uid == hold.pod_uid)
        assert sum(h.seconds for h in held) == pytest.approx(150.0 * len(GPUS))
        groups = [
            g
            for day in days
            for g in gpuhours.day_hours(CLUSTER, day, label_key="", gpu_models={})
            if (g.kind, g.value) == (gpuhours.NAMESPACE, hold.namespace)
        ]
    assert sum(g.held_hours for g in groups) == pytest.approx(150.0 * len(GPUS) / 3600)


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_containers_running_when_the_agent_starts_are_in_its_first_minutes(
    node: tuple[Node, ScriptedRuntime, RunningJobs],
) -> None:
    """The agent's first minutes close before its first listing of the runtime (a slow start,
    a loaded host): they are sent again once it has listed the containers already running, so
    the node's first minutes are as allocated as the rest (issue 36, item 1)."""
    simulated, runtime, jobs = node
    first = simulated.clock.time() + LEAD
    pod_hold = _hold(first - 3600, None)  # running for an hour already
    runtime.started(pod_hold)
    simulated.run_until(first + 70)  # the first two minutes sent: no container known yet
    simulated.follow()
    simulated.run_until(first + 3 * 60)
    assert _corrections(simulated) == 2 * len(GPUS)
    minutes = [first + 60 * k for k in range(-1, 3)]
    stored = _stored(jobs, simulated)
    assert stored == pytest.approx(_truth(simulated.tree, pod_hold, minutes))
    assert set(stored.values()) == {60.0}  # the first, partial, minute too: holding is whole
