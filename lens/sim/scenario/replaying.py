"""Replaying a scenario in (scaled) real time: a clock that runs `speed` times faster than the
wall clock (or at a rate changed as it runs: lens/roles/demo/pacing.py), and a service part
that applies the timeline's events as they fall due.

`lens sim kube --scenario NAME --speed 60` uses both, so a client watching the emulator sees an
hour of cluster life in a minute, with timestamps in scenario time.
"""

from __future__ import annotations

import threading

from lens.runtime import lifecycle
from lens.runtime.clock import Clock, SystemClock
from lens.sim.scenario.player import ScenarioPlayer


class ScaledClock:
    """Scenario time: starts at the wall clock's now and runs `speed` times as fast, or at the
    rate `set_rate` gives it since (lens demo's clock slows while the host cannot keep up).
    `real`: the clock it scales (the system's; a FakeClock in tests)."""

    # A waiter looks at the rate again at least this often, in real time: a rate raised while
    # it waits shortens its wait.
    RATE_LOOK_SECONDS = 0.5

    def __init__(self, speed: float = 1.0, *, real: Clock | None = None) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.speed = speed
        self._real = real or SystemClock()
        start = self._real.monotonic()
        self._offset = self._real.time() - start  # wall time less monotonic time
        # (real monotonic, scenario monotonic, rate) at the last change of rate: one tuple,
        # replaced whole, so that a reader never mixes two changes.
        self._anchor = (start, start, speed)

    @property
    def rate(self) -> float:
        """Seconds of scenario time in a second of real time, now."""
        return self._anchor[2]

    def set_rate(self, rate: float) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive")
        now = self._real.monotonic()
        real, scenario, old = self._anchor
        self._anchor = (now, scenario + (now - real) * old, rate)

    def monotonic(self) -> float:
        real, scenario, rate = self._anchor
        return scenario + (self._real.monotonic() - real) * rate

    def time(self) -> float:
        return self.monotonic() + self._offset

    def wait_until(self, deadline: float, stop: threading.Event) -> bool:
        while True:
            remaining = (deadline - self.monotonic()) / self.rate
            if remaining <= 0:
                return stop.is_set()
            step = min(remaining, self.RATE_LOOK_SECONDS)
            if self._real.wait_until(self._real.monotonic() + step, stop):
                return True


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
