"""The demo's clock slowed to what the host keeps up with: held at real time until the agents
run, slowed while a loop runs most of the time (a slow agent), sped up again to the speed asked
once every loop has time to spare — with the loops' own runner, on a fake real clock."""

from __future__ import annotations

import asyncio
import math
import random
import threading
from collections.abc import Callable, Iterator

import pytest

from lens.roles.demo import pacing
from lens.roles.demo.pacing import Pacer
from lens.runtime.clock import FakeClock
from lens.runtime.periodic import Loop, LoopMetrics, PeriodicRunner
from lens.runtime.selfmetrics import SelfMetrics
from lens.sim.scenario.replaying import ScaledClock

Eventually = Callable[..., None]
TICK = 5.0  # of the cluster's time, as the demo's agents' collection
NUDGE_SECONDS = 0.01


class Cluster:
    """A demo's clock and one loop like the agents' collection pass, whose pass takes `work`
    seconds of real time (the fake real clock advances by it)."""

    def __init__(self, speed: float) -> None:
        self.real = FakeClock(start_monotonic=1000.0, start_time=1.8e9)
        self.clock = ScaledClock(speed, real=self.real)
        self.work = 0.0
        self.ready = False
        self.runner = PeriodicRunner(
            [Loop(name="collect", interval_seconds=TICK, run=self._pass)],
            clock=self.clock,
            metrics=LoopMetrics(SelfMetrics(process=False)),
            jitter_ratio=0,
            rng=random.Random(0),
        )
        self.pacer = Pacer(
            self.clock, busiest=self.runner.busiest, ready=lambda: self.ready, real=self.real
        )

    def _pass(self) -> None:
        self.real.advance(self.work)

    def one_pass(self, eventually: Eventually) -> None:
        """Real time up to the next pass, and the pass run."""
        runs = self.runner.runs("collect")
        eventually(lambda: self.real.waiters == 1)
        now = self.clock.monotonic()
        # The loop's next slot: the first of its grid (no jitter) after now; an overrun skips
        # the slots it ran through.
        due = 1000.0 + TICK * (math.floor((now - 1000.0) / TICK) + 1)
        self.real.advance((due - now) / self.clock.rate + 1e-6)
        # A waiter that began its wait before the rate rose wakes on the slower schedule it
        # reckoned (half a second of real time at most): a little more real time, until it runs.
        while True:
            eventually(lambda: self.runner.runs("collect") > runs or self.real.waiters == 1)
            if self.runner.runs("collect") > runs:
                return
            self.real.advance(NUDGE_SECONDS)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    made = Cluster(speed=60)
    asyncio.run(made.runner.start())
    yield made
    asyncio.run(made.runner.stop())


def test_the_clock_keeps_real_time_until_the_agents_run(
    cluster: Cluster, eventually: Eventually
) -> None:
    assert (cluster.clock.rate, cluster.clock.speed) == (1.0, 60)
    eventually(lambda: cluster.runner.runs("collect") == 1)
    for _ in range(3):
        cluster.one_pass(eventually)
        assert cluster.pacer.adjust() == 1.0  # idle loops, but the agents are not all up
    cluster.ready = True
    cluster.one_pass(eventually)
    assert cluster.pacer.adjust() == 2.0


def test_a_slow_agent_slows_the_clock_and_a_fast_one_brings_it_back(
    cluster: Cluster, eventually: Eventually
) -> None:
    cluster.ready = True
    eventually(lambda: cluster.runner.runs("collect") == 1)
    # Passes of no time: the clock doubles each look, up to the speed asked.
    rates = []
    for _ in range(8):
        cluster.one_pass(eventually)
        rates.append(cluster.pacer.adjust())
    assert rates == [2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]

    # A pass now takes a second of real time: at 60 that is a minute of the cluster's, twelve
    # times the loop's interval. The clock halves, look after look, until a pass fits its
    # interval with time to spare (3.8 s of the 5), and stays there.
    cluster.work = 1.0
    rates = []
    for _ in range(7):
        cluster.one_pass(eventually)
        rates.append(cluster.pacer.adjust())
    assert rates == [30.0, 15.0, 7.5, 3.8, 3.8, 3.8, 3.8]
    assert pacing.LOW <= cluster.work * rates[-1] / TICK <= pacing.HIGH

    # The agent quick again: back to the speed asked.
    cluster.work = 0.0
    rates = []
    for _ in range(4):
        cluster.one_pass(eventually)
        rates.append(cluster.pacer.adjust())
    assert rates == [7.6, 15.0, 30.0, 60.0]


def test_the_pacer_never_goes_below_real_time_nor_above_the_speed_asked() -> None:
    clock = ScaledClock(8, real=FakeClock())
    busy = [("collect", 1.0)]
    pacer = Pacer(clock, busiest=lambda: busy[0], ready=lambda: True, real=FakeClock())
    assert pacer.adjust() == 1.0  # overrun at real time: real time still
    busy[0] = ("", 0.0)
    assert [pacer.adjust() for _ in range(5)] == [2.0, 4.0, 8.0, 8.0, 8.0]
    busy[0] = ("rollup", 0.9)
    assert pacer.adjust() == 4.4  # 8 x 0.5 / 0.9, two digits
    busy[0] = ("collect", 5.0)  # one pass five times its interval: halved, no more
    assert pacer.adjust() == 2.2
    assert pacer.look_seconds() == pacing.PACE_CLUSTER_SECONDS / 2.2


def test_the_pacer_stops_promptly() -> None:
    real = FakeClock()
    clock = ScaledClock(60, real=real)
    looked = threading.Event()

    def busiest() -> tuple[str, float]:
        looked.set()
        return "", 0.0

    pacer = Pacer(clock, busiest=busiest, ready=lambda: True, real=real)
    asyncio.run(pacer.start())
    real.advance(pacing.PACE_CLUSTER_SECONDS)  # at real time: a look every 15 s
    assert looked.wait(2)
    asyncio.run(pacer.stop())
    assert clock.rate == 2.0
