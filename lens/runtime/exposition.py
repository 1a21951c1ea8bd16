"""Render metrics once per cycle into bytes; /metrics serves those bytes (STYLE S5.9).

Sources are anything with prometheus_client's `collect()` (snapshot families of
runtime/families.py, the self-metrics registry of runtime/selfmetrics.py) or text sources that
render themselves (a node agent's collection cycle). runtime/textformat.py writes the text; a
collection cycle or the role's metrics loop calls `MetricsPublisher.publish()`, and
runtime/httpserver.py serves the result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Protocol

from prometheus_client.core import Metric

from lens.runtime.textformat import TextRenderer

# Every Lens name is a classic one, so the output is the 0.0.4 text format, which every scraper
# (Prometheus 2 and 3, vmagent) reads; prometheus_client's newer default header says 1.0.0.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class MetricSource(Protocol):
    """prometheus_client's collector protocol."""

    def collect(self) -> Iterable[Metric]: ...


class TextSource(Protocol):
    """A source that writes its own families in the text format."""

    def render_text(self) -> str: ...


def _collect(sources: Sequence[MetricSource]) -> Iterator[Metric]:
    for source in sources:
        yield from source.collect()


class ExpositionCache:
    """The bytes of the last render, swapped atomically; reads never block on a render."""

    def __init__(self) -> None:
        # One attribute holds both, so a reader never sees a body with another render's time.
        self._latest: tuple[bytes, float | None] = (b"", None)

    def store(self, body: bytes, *, rendered_at: float) -> None:
        self._latest = (body, rendered_at)

    def latest(self) -> tuple[bytes, float | None]:
        """The last rendered body and when it was rendered (None before the first render)."""
        return self._latest


class MetricsPublisher:
    """Renders the registered sources into an ExpositionCache; one render at a time."""

    def __init__(
        self, cache: ExpositionCache, *, wall_time: Callable[[], float], enabled: bool = True
    ) -> None:
        """`enabled` False: publishing does nothing (a process whose port is never served)."""
        self._enabled = enabled
        self._cache = cache
        self._time = wall_time
        self._sources: list[MetricSource] = []
        self._texts: list[TextSource] = []
        self._renderer = TextRenderer()
        self._lock = threading.Lock()

    def add(self, source: MetricSource) -> None:
        with self._lock:
            self._sources.append(source)

    def add_text(self, source: TextSource) -> None:
        with self._lock:
            self._texts.append(source)

    def publish_if_older_than(self, seconds: float) -> None:
        """Publish unless something published within `seconds` (a collection cycle did)."""
        _body, rendered_at = self._cache.latest()
        if rendered_at is None or self._time() - rendered_at >= seconds * 0.9:
            self.publish()

    def publish(self) -> None:
        if not self._enabled:
            return
        with self._lock:
            texts = [source.render_text() for source in self._texts]
            texts.append(self._renderer.render_metrics(_collect(self._sources)))
            self._cache.store("".join(texts).encode(), rendered_at=self._time())
