"""Load profiles: how busy a simulated GPU or NIC is at a given time, so readings move.

A profile maps a time in seconds to a utilisation in [0, 100]. state.py turns utilisation into
power, temperatures, clocks, memory and counters; scenarios pick a profile per device (or, in a
replayed cluster, per workload: lens/sim/scenario/loads.py).
"""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Protocol


class Profile(Protocol):
    def utilization(self, t: float) -> float: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Idle:
    def utilization(self, t: float) -> float:
        return 0.0


@dataclasses.dataclass(frozen=True, slots=True)
class Constant:
    level: float

    def utilization(self, t: float) -> float:
        return max(0.0, min(100.0, self.level))


@dataclasses.dataclass(frozen=True, slots=True)
class Wave:
    """A smooth swing between `low` and `high` with a period, phase-shifted per device."""

    low: float = 20.0
    high: float = 95.0
    period_seconds: float = 60.0
    phase: float = 0.0

    def utilization(self, t: float) -> float:
        swing = (math.sin(2 * math.pi * (t / self.period_seconds + self.phase)) + 1) / 2
        return self.low + (self.high - self.low) * swing


@dataclasses.dataclass(frozen=True, slots=True)
class Training:
    """Near-full compute with short dips every `step_seconds` (checkpoints, data stalls)."""

    busy: float = 97.0
    dip: float = 35.0
    step_seconds: float = 30.0
    dip_seconds: float = 3.0
    offset: float = 0.0

    def utilization(self, t: float) -> float:
        within = (t + self.offset) % self.step_seconds
        return self.dip if within < self.dip_seconds else self.busy


@dataclasses.dataclass(frozen=True, slots=True)
class Stepped:
    """`inner` read once a step and held until the next, in whole percent: a load that changes
    only at whole minutes (by default), as a replay that reads GPUs once a minute sees exactly."""

    inner: Profile
    step_seconds: float = 60.0

    def utilization(self, t: float) -> float:
        start = math.floor(t / self.step_seconds) * self.step_seconds
        return float(round(max(0.0, min(100.0, self.inner.utilization(start)))))


@dataclasses.dataclass(frozen=True, slots=True)
class Phases:
    """Levels held in turn, `(percent, seconds)` each, over and over from `origin` (the level
    before `origin` is the first one's): busy stretches between idle ones, say."""

    phases: tuple[tuple[float, float], ...]
    origin: float = 0.0

    def __post_init__(self) -> None:
        if not self.phases or any(seconds <= 0 for _, seconds in self.phases):
            raise ValueError("phases need at least one (level, seconds) with seconds > 0")

    def utilization(self, t: float) -> float:
        within = max(0.0, t - self.origin) % sum(seconds for _, seconds in self.phases)
        for level, seconds in self.phases:
            if within < seconds:
                return max(0.0, min(100.0, level))
            within -= seconds
        return max(0.0, min(100.0, self.phases[-1][0]))  # rounding at the cycle's very end


def pick(index: int, seed: int) -> Profile:
    """A varied but reproducible profile for device `index` of a node seeded with `seed`."""
    rng = random.Random(seed * 1000 + index)
    choice = rng.random()
    if choice < 0.15:
        return Idle()
    if choice < 0.55:
        return Training(offset=rng.uniform(0, 30))
    return Wave(
        low=rng.uniform(5, 40),
        high=rng.uniform(60, 100),
        period_seconds=rng.uniform(30, 300),
        phase=rng.random(),
    )
