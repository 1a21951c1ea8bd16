"""Device reports from a simulated node to the database, in one process: the agent's cycle on a
fake clock feeds the event stream, a real `lens jobs` stores what arrives.

The stored minutes are checked against what the simulator enacted (its utilization, power and
energy counter), and the changelog against the changes the test made to the node.
"""

from __future__ import annotations

import asyncio
import datetime
import math
import time
from collections.abc import Callable, Iterator

import peewee
import pytest

from lens.roles.node_agent.main import NodeAgent
from lens.runtime.clock import FakeClock
from lens.runtime.config import EventsConfig
from lens.sim.hosts.tree import HostTree
from lens.store import database, models
from lens.store.models.reports import GpuMinuteReport, RdmaPortMinute
from tests.conftest import RunningJobs, StartJobs
from tests.roles.node_agent.conftest import MakeAgent

pytestmark = pytest.mark.slow_timeout

TOLERANCE = 0.005  # the issue's: stored figures within 0.5 % of the truth
LEAD = 5  # seconds the agent runs before its first whole minute


@pytest.fixture
def clock() -> FakeClock:
    """A few seconds before a whole minute ten minutes ago, as an agent starts mid-minute (the
    server takes minutes from the last days only)."""
    return FakeClock(start_time=float(math.floor(time.time() / 60) * 60 - 600 - LEAD))


class Node:
    """The agent on `tree`, its stream shipping to `jobs`; cycles driven second by second."""

    def __init__(self, agent: NodeAgent, tree: HostTree, clock: FakeClock) -> None:
        self.agent, self.tree, self.clock = agent, tree, clock
        # The simulator's counters at each second: each GPU's energy, each port's bytes sent.
        self.energy_at: dict[float, list[float]] = {}
        self.sent_at: dict[float, list[int]] = {}

    def run_seconds(self, seconds: int, *, update: bool = True) -> None:
        """`seconds` cycles; without `update`, the tree's files stay as they are."""
        for _ in range(seconds):
            if update:
                self.tree.update()
            now = self.clock.time()
            state = self.tree.state()
            self.energy_at[now] = [g["reading"]["energy_j"] for g in state["gpus"]]
            self.sent_at[now] = [n["reading"]["xmit_bytes"] for n in state["nics"]]
            self.agent.cycle.run()
            self.clock.advance(1)


@pytest.fixture
def node(
    make_agent: MakeAgent, mi300x: HostTree, clock: FakeClock, start_jobs: StartJobs
) -> Iterator[tuple[Node, RunningJobs]]:
    jobs = start_jobs()
    agent = make_agent(
        mi300x,
        events=EventsConfig(server_address=jobs.address),
        collectors=("amdgpu", "rdma"),
    )
    asyncio.run(agent.stream.start())
    try:
        yield Node(agent, mi300x, clock), jobs
    finally:
        asyncio.run(agent.stream.stop())


def _rows(jobs: RunningJobs, query: Callable[[], peewee.Query]) -> list[peewee.Model]:
    with database.session(jobs.jobs.db):
        return list(query())


def _stored(jobs: RunningJobs, model: type[models.LensModel], count: int) -> list[peewee.Model]:
    """The rows of `model`, once `count` have arrived."""
    found: list[peewee.Model] = []

    def arrived() -> bool:
        found[:] = _rows(jobs, model.select)
        return len(found) >= count

    deadline = time.monotonic() + 30
    while not arrived():
        assert time.monotonic() < deadline, f"{len(found)} of {count} {model.__name__} rows"
        time.sleep(0.1)
    return found


def _minute(at: datetime.datetime) -> float:
    return at.replace(tzinfo=datetime.UTC).timestamp() if at.tzinfo is None else at.timestamp()


@pytest.mark.parametrize("database_engine", ["sqlite", "postgresql"], indirect=True)
def test_stored_minutes_equal_the_load_the_simulator_enacted(
    node: tuple[Node, RunningJobs],
) -> None:
    simulated, jobs = node
    start = simulated.clock.time() + LEAD
    simulated.run_seconds(LEAD + 3 * 60 + 1)  # three whole minutes and the second closing them
    rows = _stored(jobs, GpuMinuteReport, 4 * 8)
    truth = simulated.tree.state()["gpus"]
    minutes = [start - 60, start, start + 60, start + 120]
    assert sorted({_minute(r.minute) for r in rows}) == minutes
    partial = [r for r in rows if _minute(r.minute) == start - 60]
    assert {(r.samples, r.expected_samples, r.energy_joules) for r in partial} == {(LEAD, 60, None)}
    for row in (r for r in rows if _minute(r.minute) >= start):
        index, begin = row.gpu_index, _minute(row.minute)
        assert row.node_name == "gpu-node-1" and row.gpu_uuid == truth[index]["unique_id"]
        assert (row.samples, row.expected_samples) == (60, 60)
        assert row.utilization_mean_ratio == pytest.approx(0.1 * (index + 1), rel=TOLERANCE)
        power = truth[index]["reading"]["power_w"]
        assert row.power_mean_watts == pytest.approx(power, rel=TOLERANCE)
        spent = simulated.energy_at[begin + 60][index] - simulated.energy_at[begin][index]
        assert row.energy_joules == pytest.approx(spent, rel=TOLERANCE)
        assert row.idle_seconds == pytest.approx(60) and row.holders == 0
    ports = _stored(jobs, RdmaPortMinute, 4 * 8)
    names = sorted({r.device for r in ports})
    for row in (r for r in ports if _minute(r.minute) >= start):
        begin, nic = _minute(row.minute), names.index(row.device)
        sent = simulated.sent_at[begin + 60][nic] - simulated.sent_at[begin][nic]
        assert row.transmit_bytes == sent
        assert row.transmit_bytes > 0 and (row.samples, row.errors) == (60, 0)


def _changelog(jobs: RunningJobs) -> list[tuple[str, str, str, str]]:
    changes = _rows(
        jobs,
        lambda: models.NodeDeviceChangelog.select().order_by(models.NodeDeviceChangelog.id),
    )
    return [(c.device_type, c.device_uuid or c.device_name, c.op, c.changes) for c in changes]


def _settle(
    simulated: Node, jobs: RunningJobs, count: int, *, update: bool = True
) -> list[tuple[str, str, str, str]]:
    """A few cycles, then the changelog once it holds `count` rows and nothing more comes."""
    simulated.run_seconds(3, update=update)
    _stored(jobs, models.NodeDeviceChangelog, count)
    simulated.run_seconds(3, update=update)
    time.sleep(0.5)
    return _changelog(jobs)


@pytest.mark.parametrize("database_engine", ["sqlite", "postgresql"], indirect=True)
def test_each_change_to_the_node_makes_exactly_one_changelog_row_and_a_failure_none(
    node: tuple[Node, RunningJobs],
) -> None:
    simulated, jobs = node
    tree = simulated.tree
    gpus = tree.state()["gpus"]
    created = _settle(simulated, jobs, 16)
    assert (
        sorted((kind, op) for kind, _, op, _ in created)
        == [("gpu", "CREATE")] * 8 + [("rdma", "CREATE")] * 8
    )
    # Failing collectors (every GPU and RDMA device gone from sysfs, the rdma tool failing): no
    # inventory, nothing deleted.
    tree.break_tool("rdma", "fail")
    for hidden in ("sys/class/drm", "sys/class/infiniband"):
        (tree.root / hidden).rename(tree.root / f"{hidden}.away")
    assert _settle(simulated, jobs, 16, update=False) == created
    state = simulated.agent.state
    failed = (state.gpus["amd"].get(), state.rdma.get())
    assert all(observed is not None and not observed.fresh for observed in failed)
    # RDMA read through the rdma tool, which knows less than sysfs: nothing changed either.
    tree.break_tool("rdma", None)
    (tree.root / "sys/class/drm.away").rename(tree.root / "sys/class/drm")
    assert _settle(simulated, jobs, 16, update=False) == created
    observed = state.rdma.get()
    assert observed is not None and observed.fresh and observed.value.source != "sysfs"
    (tree.root / "sys/class/infiniband.away").rename(tree.root / "sys/class/infiniband")
    assert _settle(simulated, jobs, 16) == created
    tree.set_serial(3, "NEWSERIAL")
    simulated.agent.statics.refresh()  # as the agent's statics loop does
    changed = _settle(simulated, jobs, 17)[16:]
    assert [(kind, uuid, op) for kind, uuid, op, _ in changed] == [
        ("gpu", gpus[3]["unique_id"], "UPDATE")
    ]
    assert f'serial: "{gpus[3]["serial"]}" -> "NEWSERIAL"' in changed[0][3]
    tree.set_port_down(2)
    changed = _settle(simulated, jobs, 18)[17:]
    assert [(kind, op) for kind, _, op, _ in changed] == [("rdma", "UPDATE")]
    assert 'ports[1].state: "ACTIVE" -> "DOWN"' in changed[0][3]
    tree.unplug_gpu(5)
    changed = _settle(simulated, jobs, 19)[18:]
    assert [(kind, uuid, op) for kind, uuid, op, _ in changed] == [
        ("gpu", gpus[5]["unique_id"], "DELETE")
    ]
