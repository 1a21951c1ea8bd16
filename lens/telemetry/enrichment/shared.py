"""The enrichment index shared between its one writer (loading.py, a loop thread) and its many
readers (relabeling.py, request threads): a lock around every use, and a generation number that
changes with every change a reader could see, so that callers caching answers know when to drop
them. Lookups are a few dictionary reads, so readers hold the lock only that long; the writer
reads the store before taking it, and applies what it read in one step.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from lens.telemetry.enrichment.identity import SeriesIdentity
from lens.telemetry.enrichment.index import Attribution, EnrichmentIndex


class SharedIndex:
    """The index behind a lock, and its generation: a number that changes with every change a
    reader could see, so that callers caching answers know when to drop them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._index = EnrichmentIndex()
        self._generation = 0

    @property
    def generation(self) -> int:
        return self._generation

    def attribute(self, identity: SeriesIdentity) -> Attribution | None:
        with self._lock:
            return self._index.attribute(identity)

    def peek(self) -> EnrichmentIndex:
        """The index without the lock: only for its one writer, between its changes."""
        return self._index

    @contextlib.contextmanager
    def changing(self) -> Iterator[EnrichmentIndex]:
        """The index to change, readers held off until the changes are all made."""
        with self._lock:
            try:
                yield self._index
            finally:
                if self._index.take_changed():
                    self._generation += 1

    def replace(self, index: EnrichmentIndex) -> None:
        """Swap in an index built aside (the first load), in one step."""
        index.take_changed()
        with self._lock:
            self._index = index
            self._generation += 1
