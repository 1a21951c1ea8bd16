"""The fast text writer says what prometheus_client's generate_latest says."""

from __future__ import annotations

import math
import random

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.utils import floatToGoString

from lens.runtime.families import FamilyGroup, FamilySpec
from lens.runtime.textformat import (
    SnapshotFamilies,
    TextRenderer,
    escape_label_value,
    format_value,
)

from .conftest import GROUP, Gpu


@pytest.mark.parametrize(
    "value",
    [0, 1, -1, 0.1, 1e6, 1234567.0, 1.8e9, 123456789012.5, 1e22, 1e-7, -1e9, 100.0, 1e7],
)
def test_values_are_formatted_as_prometheus_client_does(value: float) -> None:
    assert format_value(value) == floatToGoString(value)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_special_values(value: float) -> None:
    assert format_value(value) == floatToGoString(value)


def test_random_values_too() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        value = rng.random() * 10 ** rng.randint(-12, 24) * rng.choice((1, -1))
        assert format_value(value) == floatToGoString(value)


def test_label_values_are_escaped() -> None:
    assert escape_label_value('a\\b"c\nd') == 'a\\\\b\\"c\\nd'


def test_a_registry_renders_like_generate_latest(normalized) -> None:
    registry = CollectorRegistry(auto_describe=False)
    counter = Counter("jobs", "Jobs run.\nSecond line \\ here.", ["job"], registry=registry)
    gauge = Gauge("temperature_celsius", "A temperature.", ["sensor"], registry=registry)
    histogram = Histogram("took_seconds", "Durations.", ["route"], registry=registry)
    counter.labels('odd "name"\n').inc(3)
    gauge.labels("edge").set(41.5)
    histogram.labels("/metrics").observe(0.002)
    # Lens leaves out the OpenMetrics-only _created series (SelfMetrics turns them off too).
    expected = "".join(
        line
        for line in generate_latest(registry).decode().splitlines(keepends=True)
        if "_created" not in line
    )
    rendered = TextRenderer().render_metrics(registry.collect())
    assert normalized(rendered) == normalized(expected)
    assert "_created" not in rendered


def _group() -> FamilyGroup[tuple[str, float | None]]:
    return FamilyGroup(
        identity_labels=("gpu",),
        identity=lambda s: (s[0],),
        specs=(
            FamilySpec(
                name="demo_ratio", help="A ratio.", type="gauge", samples=lambda s: [((), s[1])]
            ),
            FamilySpec(
                name="demo_total",
                help="A counter.",
                type="counter",
                labels=("kind",),
                samples=lambda s: [(("a",), 1.0), (("b",), 2.0)],
            ),
            FamilySpec(
                name="demo_extra",
                help="Opt-in.",
                type="gauge",
                opt_in=True,
                samples=lambda s: [((), 1.0)],
            ),
        ),
    )


def test_groups_merge_leave_out_unknowns_and_opt_in() -> None:
    group = _group()
    text = TextRenderer().render_groups(
        [(group, [("0", 0.5)]), (group, [("1", None)])], opt_in=frozenset()
    )
    assert text.count("# TYPE demo_ratio gauge") == 1, "a group given twice renders once"
    assert 'demo_ratio{gpu="0"} 0.5' in text and 'demo_ratio{gpu="1"}' not in text
    assert 'demo_total{gpu="1",kind="b"} 2.0' in text and "# TYPE demo_total counter" in text
    assert "demo_extra" not in text
    opted = TextRenderer().render_groups([(group, [("0", 1.0)])], opt_in=frozenset({"demo_extra"}))
    assert 'demo_extra{gpu="0"} 1.0' in opted


def test_a_family_without_samples_is_left_out() -> None:
    assert TextRenderer().render_groups([(_group(), [])], opt_in=frozenset()) == ""


def test_label_text_is_reused_but_not_kept_for_gone_devices() -> None:
    renderer, group = TextRenderer(), _group()
    first = renderer.render_groups([(group, [("0", 1.0), ("1", 1.0)])], opt_in=frozenset())
    second = renderer.render_groups([(group, [("0", 1.0)])], opt_in=frozenset())
    assert 'gpu="1"' in first and 'gpu="1"' not in second
    assert len(renderer._labels) == 3, "only the label sets of the last render are kept"


def _text(source: SnapshotFamilies[Gpu]) -> str:
    return source.render_text()


def test_identity_labels_are_prepended_and_unknown_values_left_out() -> None:
    source = SnapshotFamilies(GROUP)
    source.update([Gpu(0, 300.5, 10.0, {"sclk": 1e9}), Gpu(1, None, 20.0, {})])
    text = _text(source)
    assert 'lens_gpu_power_watts{gpu="0"} 300.5' in text
    assert 'lens_gpu_power_watts{gpu="1"}' not in text
    assert 'lens_gpu_energy_joules_total{gpu="1"} 20.0' in text
    assert "lens_gpu_clock_hertz" not in text


def test_opt_in_families_render_when_enabled() -> None:
    source = SnapshotFamilies(GROUP, opt_in=frozenset({"lens_gpu_clock_hertz"}))
    source.update([Gpu(0, 1.0, 1.0, {"sclk": 1e9, "mclk": 2e9})])
    text = _text(source)
    assert 'lens_gpu_clock_hertz{gpu="0",domain="mclk"} 2e+09' in text


def test_devices_that_disappear_are_gone_from_the_next_render() -> None:
    source = SnapshotFamilies(GROUP)
    source.update([Gpu(0, 1.0, 1.0, {}), Gpu(1, 1.0, 1.0, {})])
    assert 'gpu="1"' in _text(source)
    source.update([Gpu(0, 1.0, 1.0, {})])
    assert 'gpu="1"' not in _text(source)
    source.update([])
    assert "lens_gpu_power_watts" not in _text(source)
