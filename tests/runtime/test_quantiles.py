from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime.quantiles import SlidingQuantiles
from lens.runtime.selfmetrics import SelfMetrics
from lens.runtime.textformat import TextRenderer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_quantiles_are_nearest_ranks_of_the_window_and_count_and_sum_everything() -> None:
    clock = Clock()
    summary = SlidingQuantiles("x_seconds", "X.", ("node",), max_age_seconds=60, clock=clock)
    for value in range(1, 101):  # 1..100
        summary.labels("a").observe(float(value))
    assert summary.quantiles("a") == {0.5: 50.0, 0.9: 90.0, 0.95: 95.0, 0.99: 99.0}
    clock.now += 61
    summary.labels("a").observe(7.0)
    assert summary.quantiles("a") == {0.5: 7.0, 0.9: 7.0, 0.95: 7.0, 0.99: 7.0}
    (family,) = summary.collect()
    samples = {(s.name, s.labels.get("quantile")): s.value for s in family.samples}
    assert samples[("x_seconds_count", None)] == 101
    assert samples[("x_seconds_sum", None)] == 5050 + 7
    clock.now += 61
    assert all(math.isnan(v) for v in summary.quantiles("a").values()), "an empty window"


def test_the_window_keeps_the_newest_samples_only() -> None:
    summary = SlidingQuantiles("x_seconds", "X.", (), max_samples=3, clock=Clock())
    for value in (9.0, 1.0, 2.0, 3.0):
        summary.labels().observe(value)
    assert summary.quantiles()[0.99] == 3.0


def test_a_summary_renders_in_the_text_format_with_its_quantile_label() -> None:
    metrics = SelfMetrics(process=False)
    summary = metrics.summary("lens_test_latency_seconds", "A test latency.", ("node",))
    summary.labels("n1").observe(0.25)
    text = TextRenderer().render_metrics(metrics.registry.collect())
    assert [d.type for d in metrics.declared] == ["summary"]
    assert text == (
        "# HELP lens_test_latency_seconds A test latency.\n"
        "# TYPE lens_test_latency_seconds summary\n"
        + "".join(
            f'lens_test_latency_seconds{{node="n1",quantile="{q}"}} 0.25\n'
            for q in ("0.5", "0.9", "0.95", "0.99")
        )
        + 'lens_test_latency_seconds_sum{node="n1"} 0.25\n'
        + 'lens_test_latency_seconds_count{node="n1"} 1.0\n'
    )


@pytest.mark.parametrize("objectives", [(0.0,), (1.0,), (0.5, 1.5)])
def test_objectives_must_lie_between_0_and_1(objectives: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match="objectives"):
        SlidingQuantiles("x", "X.", (), objectives=objectives)


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=200))
def test_each_quantile_is_a_value_seen_and_they_do_not_decrease(values: list[float]) -> None:
    summary = SlidingQuantiles("x", "X.", (), clock=Clock())
    for value in values:
        summary.labels().observe(value)
    found = summary.quantiles()
    assert all(v in values for v in found.values())
    assert list(found.values()) == sorted(found.values())
