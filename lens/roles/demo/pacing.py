"""`lens demo`'s back-pressure: the simulated cluster's clock (replaying.ScaledClock) slowed to
what the host keeps up with. The clock runs at real time until every node's agent runs (a
hundred agents start faster on a cluster that is not racing ahead of them); then, every few
seconds, the pacer asks which periodic loop of the process was busiest since it last asked
(runtime/periodic.py's `busiest()`: its runs' mean length as a fraction of its interval) — the
agents' collection passes, the jobs' writes waiting on SQLite's one writer — and slows the
clock while one takes most of its interval, and speeds it up again, up to the speed asked, once
every loop has time to spare.

Every loop's interval is in the cluster's time, so a slower clock is less work per real second:
the cluster lives slower, and its data stays complete (no reading missed, no holder lost, no
write given up on). /v1/about's `clock_rate` is the rate now.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from lens.runtime import lifecycle
from lens.runtime.clock import Clock, SystemClock
from lens.sim.scenario.replaying import ScaledClock

log = logging.getLogger(__name__)

# Between two looks: PACE_SECONDS of real time, and long enough for the agents' collection
# (every 5 s of the cluster's time) to have run a few times at a slow rate.
PACE_SECONDS = 2.0
PACE_CLUSTER_SECONDS = 15.0
# Fractions of its interval the busiest loop's runs may take. Above HIGH the clock slows so that
# they would take TARGET (a loop's work is so much per second of the cluster's time); below LOW
# it speeds up, by RISE at most a look (a loop run rarely at a slow rate is seen again only
# later).
HIGH = 0.8
TARGET = 0.5
LOW = 0.3
RISE = 2.0
FALL = 0.5  # at most, a look: one long run (a burst of load from elsewhere) halves the rate
# Never slower than real time: at real time the demo is `lens up` on a slow host.
MIN_RATE = 1.0


def rounded(rate: float) -> float:
    """Two significant digits: the header says "7.4x real time", not 7.3912."""
    return float(f"{rate:.2g}")


class Pacer:
    """A Service part: holds `clock` at real time until `ready()`, then adjusts its rate every
    look from `busiest()`'s (loop, its runs' length as a fraction of its interval), on `real`
    time."""

    name = "simulated-clock-pacer"

    def __init__(
        self,
        clock: ScaledClock,
        *,
        busiest: Callable[[], tuple[str, float]],
        ready: Callable[[], bool],
        real: Clock | None = None,
    ) -> None:
        self._clock = clock
        self._busiest = busiest
        self._ready = ready
        self._real = real or SystemClock()
        clock.set_rate(min(clock.speed, MIN_RATE))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="simulated-clock-pacer", daemon=True)

    def adjust(self) -> float:
        """One look: the clock's new rate."""
        loop, busy = self._busiest()
        rate = self._clock.rate
        wanted = rate
        if not self._ready():
            return rate
        if busy > HIGH:
            wanted = rate * max(FALL, TARGET / busy)
        elif busy < LOW:
            wanted = rate * (RISE if busy <= 0 else min(RISE, TARGET / busy))
        wanted = min(self._clock.speed, max(MIN_RATE, rounded(wanted)))
        if wanted == rate:
            return rate
        self._clock.set_rate(wanted)
        self._tell(rate, wanted, loop, busy)
        return wanted

    def _tell(self, old: float, new: float, loop: str, busy: float) -> None:
        """Info when the clock first falls behind the speed asked and when it is back to it;
        each step between at debug."""
        asked = self._clock.speed
        fields = {"rate": new, "speed": asked, "loop": loop, "busy": round(busy, 2)}
        if old == asked and new < asked:
            log.info("host cannot keep up: simulated clock slowed", extra=fields)
        elif new == asked:
            log.info("simulated clock at the speed asked", extra=fields)
        else:
            log.debug("simulated clock rate changed", extra=fields)

    def _run(self) -> None:
        while not self._real.wait_until(self._real.monotonic() + self.look_seconds(), self._stop):
            self.adjust()

    def look_seconds(self) -> float:
        """Real seconds to the next look, at the rate now."""
        return max(PACE_SECONDS, PACE_CLUSTER_SECONDS / self._clock.rate)

    async def start(self) -> None:
        self._thread.start()

    async def stop(self) -> None:
        self._stop.set()
        await lifecycle.in_thread(self._thread.join, name="simulated-clock-pacer-join")
