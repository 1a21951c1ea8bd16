from __future__ import annotations

import asyncio
import threading
import time

import pytest

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
