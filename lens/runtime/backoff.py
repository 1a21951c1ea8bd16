"""Exponential backoff with full jitter, for reconnect and retry loops (STYLE S12.3).

A TemporaryError's own `delay` is honoured as a floor. Watchers, the gRPC client and other
reconnecting parts keep one Backoff per connection and `reset()` it after a success.
"""

from __future__ import annotations

import random

from lens.runtime import errors


class Backoff:
    """Delays of initial·factor^n seconds, capped, each drawn uniformly from [0, that]."""

    def __init__(
        self,
        *,
        initial: float = 0.5,
        factor: float = 2.0,
        maximum: float = 30.0,
        rng: random.Random | None = None,
    ) -> None:
        if initial <= 0 or factor < 1 or maximum < initial:
            raise ValueError("need 0 < initial <= maximum and factor >= 1")
        self._initial = initial
        self._factor = factor
        self._maximum = maximum
        self._rng = rng or random.Random()
        self._failures = 0

    @property
    def failures(self) -> int:
        """Failures since the last reset."""
        return self._failures

    def next_delay(self, error: BaseException | None = None) -> float:
        """Seconds to wait before the next attempt, after one more failure."""
        ceiling = min(self._maximum, self._initial * self._factor**self._failures)
        self._failures += 1
        delay = self._rng.uniform(0, ceiling)
        if isinstance(error, errors.TemporaryError):
            delay = max(delay, min(error.delay, self._maximum))
        return delay

    def reset(self) -> None:
        self._failures = 0
