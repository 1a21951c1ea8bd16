"""Device reports end to end in real time: `lens node-agent` and `lens jobs` as processes on a
simulated node whose readings move with the wall clock, containers on a real containerd holding
known GPUs for known seconds, both processes SIGKILLed mid-minute.

Two pipelines watch the same node and containers at once, one storing to SQLite and one to
PostgreSQL, so the minutes of both can be checked against one truth in one run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import peewee
import pytest

from lens.runtime.clock import SystemClock
from lens.runtime.config import DatabaseConfig
from lens.sim.containerd import PrivateContainerd, make_device_node, pod_labels
from lens.sim.hosts import profiles
from lens.sim.hosts.state import NodeSpec
from lens.sim.hosts.tree import HostTree
from lens.store import database
from lens.store.models.reports import GpuMinuteHolder, GpuMinuteReport, RdmaPortMinute
from tests.conftest import private_containerd
from tests.databases import new_database
from tests.roles.node_agent.processes import Pipeline

# Real minutes must pass: about three of them, whatever second of a minute it starts in.
pytestmark = pytest.mark.timeout(300)

GPUS = 8
RENDER_MAJOR = 226
# Bytes a port sends per second at 100 % load in the simulator (state.py: 400 Gb/s at 60 %).
PORT_BYTES_PER_SECOND_AT_FULL_LOAD = 400e9 / 8 * 0.6


def _load(index: int) -> float:
    """GPU and port `index` run steadily at 10 * (index + 1) %."""
    return 0.1 * (index + 1)


@pytest.fixture(scope="module")
def containerd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateContainerd]:
    """This module's own containerd: whatever its containers leave behind, should the test
    fail halfway, stays out of other modules' runtimes."""
    yield from private_containerd(tmp_path_factory.mktemp("reports-ctd"))


@pytest.fixture
def live_tree(memory_dir: Path) -> Iterator[HostTree]:
    """An 8 x MI300X node whose readings follow the wall clock (updated 4 times a second)."""
    loads = [profiles.Constant(100 * _load(i)) for i in range(GPUS)]
    tree = HostTree(
        memory_dir / "live", NodeSpec(name="gpu-node-1"), clock=SystemClock(), device_profiles=loads
    ).build()
    stop = threading.Event()

    def move() -> None:
        while not stop.wait(0.25):
            tree.update()

    mover = threading.Thread(target=move, name="tree-update", daemon=True)
    mover.start()
    yield tree
    stop.set()
    mover.join(5)


@dataclasses.dataclass
class Stored:
    pipeline: Pipeline
    url: str

    def rows(self, model: type[peewee.Model]) -> list[peewee.Model]:
        db = database.open_database(DatabaseConfig(url=self.url))
        try:
            with database.session(db):
                return list(model.select())
        finally:
            db.close()


@pytest.fixture
def pipelines(
    live_tree: HostTree,
    containerd: PrivateContainerd,
    tmp_path: Path,
    free_port: Callable[[], int],
) -> Iterator[list[Stored]]:
    with contextlib.ExitStack() as stack:
        built = []
        for engine in ("sqlite", "postgresql"):
            url = stack.enter_context(new_database(engine, tmp_path))
            directory = tmp_path / engine
            directory.mkdir()
            ports = [free_port(), free_port(), free_port()]
            pipeline = Pipeline(tree=live_tree, ctd=containerd, url=url, tmp=directory, ports=ports)
            stack.callback(pipeline.jobs.stop)
            stack.callback(pipeline.agent.stop)
            built.append(Stored(pipeline, url))
        yield built


@dataclasses.dataclass
class Hold:
    """A container holding one GPU (its render node) for `seconds`, and when it ran."""

    name: str
    gpu: int
    seconds: int
    began: float = 0.0
    ended: float = 0.0
    failure: str = ""


def _hold(ctd: PrivateContainerd, hold: Hold, render: Path) -> None:
    labels = pod_labels(
        pod=f"pod-{hold.name}", namespace="team-a", uid=f"uid-{hold.name}", container="main"
    )
    hold.began = time.time()
    # runc keeps its containers' state by id for every containerd of the host: an id of its
    # own per run, so that no other test's (or an earlier run's) container can stand in its way.
    done = ctd.run(
        f"{hold.name}-{uuid.uuid4().hex[:8]}",
        ["sleep", str(hold.seconds)],
        labels=labels,
        devices=[render],
        timeout=hold.seconds + 60,
    )
    hold.ended = time.time()
    if done.returncode != 0:
        hold.failure = done.stderr or f"exit code {done.returncode}"


def _minute_of(at: float) -> float:
    return math.floor(at / 60) * 60


def _sleep_until(at: float) -> None:
    time.sleep(max(0.0, at - time.time()))


def _until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.5)


def _by_minute(rows: list[peewee.Model]) -> dict[float, list[peewee.Model]]:
    found: dict[float, list[peewee.Model]] = defaultdict(list)
    for row in rows:
        found[row.minute.timestamp()].append(row)
    return found


def test_every_gpu_second_reaches_its_pod_and_kills_lose_and_double_nothing(
    pipelines: list[Stored], live_tree: HostTree, containerd: PrivateContainerd, tmp_path: Path
) -> None:
    for stored in pipelines:
        stored.pipeline.start(_eventually)
    first_whole = _minute_of(time.time()) + 60  # every agent up before it began
    renders = [
        make_device_node(tmp_path / "dev" / f"renderD{128 + i}", RENDER_MAJOR, 128 + i)
        for i in range(2)
    ]
    # b holds GPU 1 across the next minute boundary; a holds GPU 0 within its minute or across.
    holds = [Hold("hold-a", 0, 12), Hold("hold-b", 1, int(60 - time.time() % 60) + 8)]
    threads = [
        threading.Thread(target=_hold, args=(containerd, hold, renders[hold.gpu])) for hold in holds
    ]
    for thread in threads:
        thread.start()
    # The servers go down while the containers run: minutes close into the agents' journals.
    time.sleep(3)
    for stored in pipelines:
        stored.pipeline.jobs.kill()
    for thread in threads:
        thread.join(120)
    assert [hold.failure for hold in holds] == ["", ""]
    # Once the minute b ended in has closed (sent to nobody yet), the agents are killed too.
    killed_in = _minute_of(holds[1].ended) + 60
    _sleep_until(killed_in + 2)
    for stored in pipelines:
        stored.pipeline.agent.kill()
    time.sleep(2)
    for stored in pipelines:
        stored.pipeline.agent.start()
    time.sleep(2)
    for stored in pipelines:
        stored.pipeline.jobs.start()
    restarted_in = _minute_of(time.time())
    minutes = [first_whole + 60 * i for i in range(int((restarted_in - first_whole) / 60) + 1)]
    _sleep_until(restarted_in + 61)
    truth = live_tree.state()
    for stored in pipelines:
        _check_minutes(stored, minutes, killed_in, restarted_in, truth)
        _check_holders(stored, holds, truth)


def _eventually(predicate: Callable[[], bool], timeout: float = 3.0) -> None:
    _until(predicate, timeout, "the pipeline did not start in time")


def _arrived(stored: Stored, minutes: list[float]) -> bool:
    gpus = _by_minute(stored.rows(GpuMinuteReport))
    ports = _by_minute(stored.rows(RdmaPortMinute))
    return all(len(gpus[m]) == GPUS and len(ports[m]) == GPUS for m in minutes)


def _check_minutes(
    stored: Stored,
    minutes: list[float],
    killed_in: float,
    restarted_in: float,
    truth: dict[str, object],
) -> None:
    """Every minute is there once per device; whole ones show the simulator's load."""
    _until(lambda: _arrived(stored, minutes), 90, f"minutes missing in {stored.url}")
    gpus = _by_minute(stored.rows(GpuMinuteReport))
    ports = _by_minute(stored.rows(RdmaPortMinute))
    uuids = [gpu["unique_id"] for gpu in truth["gpus"]]  # type: ignore[index]
    for minute in minutes:
        assert sorted(r.gpu_uuid for r in gpus[minute]) == sorted(uuids)
        assert len({(r.device, r.port) for r in ports[minute]}) == GPUS
        if minute < killed_in:  # the agent ran all of it
            for row in gpus[minute]:
                # A loaded machine may skip cycles (they never overlap): fewer samples, said.
                assert 30 <= row.samples <= 61 and row.expected_samples == 60, row.samples
                assert row.utilization_mean_ratio == pytest.approx(_load(row.gpu_index))
            nics = sorted(r.device for r in ports[minute])
            for row in ports[minute]:
                rate = PORT_BYTES_PER_SECOND_AT_FULL_LOAD * _load(nics.index(row.device))
                assert row.transmit_bytes == pytest.approx(rate * 60, rel=0.01)
    # The kill lost the readings of the minute it fell in; the minute says how many it has.
    for row in gpus[restarted_in]:
        assert 0 < row.samples < row.expected_samples == 60


def _check_holders(stored: Stored, holds: list[Hold], truth: dict[str, object]) -> None:
    """Each pod's GPU-seconds are the seconds its container held that GPU, on that GPU only,
    and no GPU-minute holds more than its 60 seconds."""
    uuids = [gpu["unique_id"] for gpu in truth["gpus"]]  # type: ignore[index]
    held: dict[tuple[str, str], float] = defaultdict(float)
    for row in stored.rows(GpuMinuteHolder):
        held[(row.pod_name, row.gpu_uuid)] += row.seconds
        assert (row.namespace, row.pod_uid) == ("team-a", row.pod_name.replace("pod-", "uid-"))
    assert set(held) == {(f"pod-{h.name}", uuids[h.gpu]) for h in holds}
    for hold in holds:
        seconds = held[(f"pod-{hold.name}", uuids[hold.gpu])]
        assert hold.seconds - 0.5 <= seconds <= hold.ended - hold.began + 0.5, hold
    for row in stored.rows(GpuMinuteReport):
        if row.holders:
            attributed = sum(
                h.seconds
                for h in stored.rows(GpuMinuteHolder)
                if (h.gpu_uuid, h.minute) == (row.gpu_uuid, row.minute)
            )
            assert attributed + row.idle_seconds == pytest.approx(60, abs=0.01)
