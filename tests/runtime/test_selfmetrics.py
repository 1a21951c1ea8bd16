from __future__ import annotations

import pytest

from lens.runtime import selfmetrics
from lens.runtime.selfmetrics import SelfMetrics


@pytest.mark.parametrize(
    ("name", "help", "kind", "labels", "problem"),
    [
        ("lens-x", "Help.", "gauge", (), "not a valid metric name"),
        ("lens_x", "Help.", "counter", (), "ends in _total"),
        ("lens_x_total", "Help.", "gauge", (), "only counters end in _total"),
        ("lens_x", "Help.", "info", (), "ends in _info"),
        ("lens_x", "No period", "gauge", (), "ending with a period"),
        ("lens_x", "Help.", "gauge", ("bad-label",), "not a valid label name"),
        ("lens_x", "Help.", "gauge", ("__reserved",), "not a valid label name"),
    ],
)
def test_bad_families_are_refused(
    name: str, help: str, kind: str, labels: tuple[str, ...], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        selfmetrics.check_family(name, help, kind, labels)


def test_instruments_register_on_a_private_registry() -> None:
    metrics = SelfMetrics(process=False)
    metrics.counter("lens_things_total", "Things.", ("kind",)).labels("a").inc(2)
    metrics.gauge("lens_level_ratio", "Level.").set(0.5)
    metrics.histogram("lens_wait_seconds", "Wait in seconds.", buckets=(1.0,)).observe(0.3)
    registry = metrics.registry
    assert registry.get_sample_value("lens_things_total", {"kind": "a"}) == 2
    assert registry.get_sample_value("lens_level_ratio") == 0.5
    assert registry.get_sample_value("lens_wait_seconds_bucket", {"le": "1.0"}) == 1
    with pytest.raises(ValueError, match="declared twice"):
        metrics.gauge("lens_level_ratio", "Again.")


def test_process_metrics_are_included_by_default() -> None:
    registry = SelfMetrics().registry
    assert registry.get_sample_value("process_resident_memory_bytes") is not None
