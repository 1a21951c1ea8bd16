from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from lens.runtime import exposition
from lens.runtime.clock import FakeClock
from lens.runtime.selfmetrics import SelfMetrics


class CountingSource:
    def __init__(self) -> None:
        self.collections = 0

    def collect(self) -> Iterator[Metric]:
        self.collections += 1
        family = GaugeMetricFamily("lens_test_value", "A value.")
        family.add_metric([], float(self.collections))
        yield family


def test_publish_renders_every_source_once_into_the_cache() -> None:
    clock = FakeClock(start_time=5000.0)
    cache = exposition.ExpositionCache()
    assert cache.latest() == (b"", None)
    publisher = exposition.MetricsPublisher(cache, wall_time=clock.time)
    source = CountingSource()
    metrics = SelfMetrics(process=False)
    metrics.counter("lens_events_total", "Events.").inc()
    publisher.add(source)
    publisher.add(metrics.registry)
    publisher.publish()
    assert source.collections == 1
    body, rendered_at = cache.latest()
    assert rendered_at == 5000.0
    text = body.decode()
    assert "lens_test_value 1.0" in text
    assert "lens_events_total 1.0" in text


def test_reading_the_cache_never_collects() -> None:
    cache = exposition.ExpositionCache()
    publisher = exposition.MetricsPublisher(cache, wall_time=lambda: 1.0)
    source = CountingSource()
    publisher.add(source)
    publisher.publish()
    for _ in range(5):
        cache.latest()
    assert source.collections == 1
    publisher.publish()
    assert b"lens_test_value 2.0" in cache.latest()[0]


class TextCycle:
    def render_text(self) -> str:
        header = "# HELP lens_cycle_value A value.\n# TYPE lens_cycle_value gauge\n"
        return header + "lens_cycle_value 3.0\n"


def test_text_sources_come_first_and_a_recent_publish_is_not_repeated() -> None:
    clock = FakeClock(start_time=100.0)
    cache = exposition.ExpositionCache()
    publisher = exposition.MetricsPublisher(cache, wall_time=clock.time)
    source = CountingSource()
    publisher.add(source)
    publisher.add_text(TextCycle())
    publisher.publish_if_older_than(5)
    text = cache.latest()[0].decode()
    assert text.index("lens_cycle_value 3.0") < text.index("lens_test_value 1.0")
    clock.advance(2)
    publisher.publish_if_older_than(5)
    assert source.collections == 1, "a cycle published 2 s ago: nothing to do"
    clock.advance(3)
    publisher.publish_if_older_than(5)
    assert source.collections == 2
