"""Minutes on the UTC clock and cumulative counters split at their boundaries.

gpuminutes.py and portminutes.py use these: `minute_of` places a reading in its minute, a
Cadence says how many readings a minute should hold, and a Tally turns one cumulative counter's
readings into per-minute increases (docs/reports.md, "Counters across a minute boundary").
"""

from __future__ import annotations

import dataclasses
import math

MINUTE = 60
# Readings on either side of a minute boundary further apart than this many cycles leave the
# counter's value at the boundary unknown: one missed cycle is tolerated, with jitter to spare.
BRACKET_CYCLES = 2.5
# A reading this much older than the last one means the clock stepped back, not a late sample.
RESTART_SECONDS = 600.0

Amount = int | float


def minute_of(time: float) -> int:
    """The start of the UTC minute holding `time` (epoch seconds count no leap seconds, so a
    minute is always 60 of them and starts at a multiple of 60)."""
    return math.floor(time / MINUTE) * MINUTE


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Cadence:
    """What the agent's collection cycle promises about the readings of one minute."""

    interval_seconds: float
    expected_samples: int  # whole cycles in a minute: a minute with fewer missed some
    bracket_seconds: float  # the most two readings across a boundary may be apart

    @classmethod
    def of(cls, interval_seconds: float) -> Cadence:
        if not 0 < interval_seconds <= MINUTE:
            raise ValueError(f"a collection interval of {interval_seconds} s is not in (0, 60]")
        # The small allowance keeps 60 / 0.1 (599.9999...) at 600.
        expected = math.floor(MINUTE / interval_seconds + 1e-9)
        return cls(
            interval_seconds=interval_seconds,
            expected_samples=expected,
            bracket_seconds=BRACKET_CYCLES * interval_seconds,
        )


class Tally:
    """One cumulative counter's increase within the open minute.

    Fed each reading's increase over the previous reading (wraps and resets already resolved by
    the caller). The value at a minute boundary is interpolated linearly between the readings on
    either side, so an increase that straddles a boundary is split between the two minutes in
    proportion to time; whole-number counters are split by rounding down, so the minutes still
    add up exactly to the counter's increase. A minute is known only when both of its boundaries
    were bracketed and no increase inside it was lost.
    """

    __slots__ = ("_taken", "_whole", "amount", "known", "last")

    def __init__(self, *, whole: bool) -> None:
        self._whole = whole
        self.last: float | None = None  # time of the last reading
        self.amount: Amount = 0  # increase since the open minute's start boundary
        self.known = False
        # Of the increase up to the next reading, the part already given to closed minutes.
        self._taken: Amount = 0

    def close(
        self, end: float, *, time: float | None, increase: Amount | None, limit: float
    ) -> Amount | None:
        """Close the open minute at `end`: its increase, None when unknown. `time` and
        `increase` are the first reading after `end` (None: there is none yet)."""
        last = self.last
        if (
            last is not None
            and time is not None
            and increase is not None
            and last < end <= time
            and time - last <= limit
        ):
            cut = self._portion(increase, (end - last) / (time - last))
            figure = self.amount + cut - self._taken if self.known else None
            self.known, self._taken = True, cut
        else:
            figure = None
            self.known, self._taken = False, 0
        self.amount = 0
        return figure

    def advance(self, time: float, increase: Amount | None) -> None:
        """Count a reading at `time` that rose by `increase` over the last (None: unknown, or
        this is the first reading)."""
        if increase is None or self.last is None:
            self.known = False
        else:
            self.amount += increase - self._taken
        self._taken = 0
        self.last = time

    def forget(self) -> None:
        """Drop the last reading: the next one starts afresh (a skipped stretch of time)."""
        self.last, self.amount, self.known, self._taken = None, 0, False, 0

    def _portion(self, increase: Amount, fraction: float) -> Amount:
        if not self._whole:
            return increase * fraction
        # Clamped: a float product of a big integer may round just past it.
        return min(int(increase), max(0, math.floor(increase * fraction)))
