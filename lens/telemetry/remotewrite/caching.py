"""A bounded cache of relabelled label sets for the rewriting modules (v1.py, v2.py), shared by
every HTTP thread of a process and emptied whenever the Relabeler's generation changes.

Two dicts: lookups go to the young one, and when it is full it becomes the old one and a new
young one starts; an entry found in the old one moves back. Hits cost one dict lookup (no
recency bookkeeping, as an LRU would need), entries used since the last turn survive it, and
at most `max_entries` are held. Dict operations are atomic under the GIL; a lock only orders
the turns and generation changes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from lens.telemetry.remotewrite.protocol import Relabeler

K = TypeVar("K")
V = TypeVar("V")


class _State(Generic[K, V]):
    __slots__ = ("generation", "old", "young")

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.young: dict[K, V] = {}
        self.old: dict[K, V] = {}


class LabelCache(Generic[K, V]):
    """Answers computed from the Relabeler, kept per key until its generation changes."""

    def __init__(self, relabeler: Relabeler, *, max_entries: int) -> None:
        if max_entries < 2:
            raise ValueError("max_entries must be at least 2")
        self._relabeler = relabeler
        self._half = max_entries // 2
        self._lock = threading.Lock()
        self._state: _State[K, V] = _State(relabeler.generation())

    def begin(self) -> dict[K, V]:
        """The dict to look keys up in for one request, after emptying the cache if the
        Relabeler's generation moved on. A miss there goes to fill()."""
        generation = self._relabeler.generation()
        state = self._state
        if state.generation != generation:
            with self._lock:
                if self._state.generation != generation:
                    self._state = _State(generation)
                state = self._state
        return state.young

    def fill(self, key: K, compute: Callable[[K], V]) -> V:
        """The value of `key`: from the cache, or computed and kept."""
        state = self._state
        value = state.young.get(key)
        if value is not None:
            return value
        value = state.old.get(key)
        if value is None:
            value = compute(key)
        if len(state.young) >= self._half:
            with self._lock:
                if len(state.young) >= self._half:
                    state.old, state.young = state.young, {}
        state.young[key] = value
        return value

    def __len__(self) -> int:
        state = self._state
        return len(state.young) + len(state.old)
