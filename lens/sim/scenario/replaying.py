"""Replaying a scenario in (scaled) real time: a clock that runs `speed` times faster than the
wall clock, and a service part that applies the timeline's events as they fall due.

`lens sim kube --scenario NAME --speed 60` uses both, so a client watching the emulator sees an
hour of cluster life in a minute, with timestamps in scenario time.
"""

from __future__ import annotations

import threading
import time

from lens.runtime import lifecycle
from lens.sim.scenario.player import ScenarioPlayer


class ScaledClock:
    """Scenario time: starts at the wall clock's now and runs `speed` times as fast."""

    def __init__(self, speed: float = 1.0) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.speed = speed
        self._wall_start = time.time()
        self._mono_start = time.monotonic()

    def monotonic(self) -> float:
        return self._mono_start + (time.monotonic() - self._mono_start) * self.speed

    def time(self) -> float:
        return self._wall_start + (time.monotonic() - self._mono_start) * self.speed

    def wait_until(self, deadline: float, stop: threading.Event) -> bool:
        remaining = (deadline - self.monotonic()) / self.speed
        if remaining <= 0:
            return stop.is_set()
        return stop.wait(remaining)


class ReplayPart:
    """A Service part that keeps applying the player's due events until stopped."""

    name = "scenario"

    def __init__(self, player: ScenarioPlayer, *, tick_seconds: float = 0.2) -> None:
        self._player = player
        self._tick = tick_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="scenario-replay", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self._tick):
            self._player.run_until(self._player.elapsed)

    async def start(self) -> None:
        self._thread.start()

    async def stop(self) -> None:
        self._stop.set()
        await lifecycle.in_thread(self._thread.join, name="scenario-replay-join")
