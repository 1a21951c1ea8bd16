"""Injected time (STYLE S14.5): the system clock for roles, a FakeClock that tests advance by hand.

runtime/periodic.py and everything that waits or stamps time takes a Clock, so tests drive
periodic code with `FakeClock.advance()` instead of sleeping.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic time for intervals, wall time for timestamps, and an interruptible wait."""

    def monotonic(self) -> float: ...

    def time(self) -> float: ...

    def wait_until(self, deadline: float, stop: threading.Event) -> bool:
        """Block until monotonic() >= deadline or `stop` is set; True when stopped."""
        ...


class SystemClock:
    """The real clocks of the machine."""

    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()

    def wait_until(self, deadline: float, stop: threading.Event) -> bool:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return stop.is_set()
        return stop.wait(remaining)


class FakeClock:
    """A clock that moves only when a test calls `advance()`; waiting threads wake up then."""

    # Waiters re-check `stop` this often in real time, since an Event cannot wake a Condition.
    _POLL_SECONDS = 0.005

    def __init__(self, *, start_monotonic: float = 1000.0, start_time: float = 1.8e9) -> None:
        self._monotonic = start_monotonic
        self._offset = start_time - start_monotonic
        self._changed = threading.Condition()
        self._deadlines: dict[int, float] = {}

    def monotonic(self) -> float:
        with self._changed:
            return self._monotonic

    def time(self) -> float:
        with self._changed:
            return self._monotonic + self._offset

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock cannot go back")
        with self._changed:
            self._monotonic += seconds
            self._changed.notify_all()

    @property
    def waiters(self) -> int:
        """Threads blocked in wait_until on a deadline still in the future.

        A test advances the clock once this count shows every periodic thread settled.
        """
        with self._changed:
            return sum(1 for d in self._deadlines.values() if d > self._monotonic)

    def wait_until(self, deadline: float, stop: threading.Event) -> bool:
        me = threading.get_ident()
        with self._changed:
            self._deadlines[me] = deadline
            try:
                while self._monotonic < deadline and not stop.is_set():
                    self._changed.wait(self._POLL_SECONDS)
            finally:
                del self._deadlines[me]
        return stop.is_set()
