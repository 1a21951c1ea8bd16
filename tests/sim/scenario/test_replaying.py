from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest

from lens.runtime.clock import FakeClock
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import replaying
from lens.sim.scenario.player import ScenarioPlayer
from lens.sim.scenario.spec import NodeGroup, Scenario, Workload


def test_a_scaled_clock_runs_faster_than_the_wall() -> None:
    clock = replaying.ScaledClock(speed=1000)
    start = clock.time()
    stop = threading.Event()
    assert clock.wait_until(clock.monotonic() + 50, stop) is False  # 50 scenario seconds = 50 ms
    assert clock.time() - start >= 50
    with pytest.raises(ValueError):
        replaying.ScaledClock(0)


def test_a_scaled_clock_keeps_its_time_continuous_across_changes_of_rate(
    eventually: Callable[..., None],
) -> None:
    real = FakeClock(start_monotonic=100.0, start_time=1.8e9)
    clock = replaying.ScaledClock(speed=60, real=real)
    assert (clock.monotonic(), clock.time(), clock.rate) == (100.0, 1.8e9, 60)
    real.advance(2)
    assert clock.monotonic() == 220.0  # two real seconds at 60
    clock.set_rate(5)
    assert (clock.monotonic(), clock.rate, clock.speed) == (220.0, 5, 60)
    real.advance(4)
    assert clock.monotonic() == 240.0 and clock.time() == 1.8e9 + 140
    with pytest.raises(ValueError):
        clock.set_rate(0)

    # A waiter on the scenario's clock follows the rate: 30 scenario seconds at 5 are 6 real
    # ones; the rate raised to 30 meanwhile, the rest takes a sixth of the time.
    stop = threading.Event()
    woke: list[bool] = []
    waiter = threading.Thread(target=lambda: woke.append(clock.wait_until(270.0, stop)))
    waiter.start()
    eventually(lambda: real.waiters == 1)
    real.advance(3)  # 15 scenario seconds: 255
    eventually(lambda: real.waiters == 1)
    clock.set_rate(30)
    real.advance(0.5)  # 15 more at 30: 270
    waiter.join(2)
    assert woke == [False] and clock.monotonic() == 270.0


def test_the_replay_part_applies_events_as_they_fall_due() -> None:
    clock = replaying.ScaledClock(speed=600)
    kube = KubeApiServer(clock=clock)
    scenario = Scenario(
        name="t",
        nodes=(NodeGroup(count=1),),
        workloads=(Workload(kind="Job", name="j", gpus_per_pod=1, start=30, duration=60),),
    )
    player = ScenarioPlayer(scenario, kube, clock=clock).load()
    assert player.pod_phases() == {}
    part = replaying.ReplayPart(player, tick_seconds=0.01)
    asyncio.run(part.start())
    deadline = time.monotonic() + 5
    while player.pod_phases() != {"Succeeded": 1} and time.monotonic() < deadline:
        threading.Event().wait(0.01)
    asyncio.run(part.stop())
    kube.stop()
    assert player.pod_phases() == {"Succeeded": 1}
