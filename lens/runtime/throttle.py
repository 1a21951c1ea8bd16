"""Log lines per reason at most once a while: a flood of one kind of bad input (garbage gRPC
messages, unusable records, unreadable runtime events) is counted in full by its metric and
told of in the log once a minute, with how many went untold in between.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class LogThrottle:
    """Says when a line for a reason is due: the first time, then once `every_seconds` passed
    (or the clock went back)."""

    def __init__(
        self, *, every_seconds: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._every = every_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._logged: dict[str, float] = {}  # reason -> when its last line was due
        self._untold: dict[str, int] = {}

    def due(self, reason: str, *, count: int = 1) -> int | None:
        """For `count` more occurrences of `reason`: None when no line is due, else how many
        went untold since the previous line."""
        now = self._clock()
        with self._lock:
            last = self._logged.get(reason)
            if last is not None and 0 <= now - last < self._every:
                self._untold[reason] = self._untold.get(reason, 0) + count
                return None
            self._logged[reason] = now
            return self._untold.pop(reason, 0)
