"""The collection cycle: due collectors run concurrently with timeouts; failures drop families."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest

from lens.roles.node_agent.cycle import Binding, CollectionCycle, CollectorMetrics
from lens.runtime import errors
from lens.runtime.clock import FakeClock
from lens.runtime.families import FamilyGroup, FamilySpec
from lens.runtime.selfmetrics import SelfMetrics

GROUP: FamilyGroup[tuple[str, float]] = FamilyGroup(
    identity_labels=("device",),
    identity=lambda s: (s[0],),
    specs=(
        FamilySpec(
            name="demo_value", help="A value.", type="gauge", samples=lambda s: [((), s[1])]
        ),
    ),
)


class Rig:
    def __init__(self, *bindings: Binding[object]) -> None:
        self.clock = FakeClock(start_monotonic=100.0, start_time=1_800_000_000.0)
        self.metrics = SelfMetrics(process=False)
        self.published = 0
        self.cycle = CollectionCycle(
            bindings,
            clock=self.clock,
            metrics=CollectorMetrics(self.metrics),
            publish=self._publish,
        )

    def _publish(self) -> None:
        self.published += 1

    def sample(self, name: str, **labels: str) -> float | None:
        return self.metrics.registry.get_sample_value(name, labels)


@pytest.fixture
def rigs() -> Iterator[list[Rig]]:
    made: list[Rig] = []
    yield made
    for rig in made:
        rig.cycle.close()


def _binding(name: str, collect, *, interval: float = 1.0, timeout: float = 1.0, **kw) -> Binding:
    return Binding(
        name=name,
        interval_seconds=interval,
        timeout_seconds=timeout,
        collect=collect,
        render=lambda value: [(GROUP, [(name, value)])],
        **kw,
    )


def test_a_tick_collects_keeps_renders_and_publishes_once(rigs: list[Rig]) -> None:
    kept: list[object] = []
    rig = Rig(_binding("a", lambda: 1.5, keep=kept.append), _binding("b", lambda: 2.0))
    rigs.append(rig)
    rig.cycle.run()
    text = rig.cycle.render_text()
    assert text.count("# TYPE demo_value gauge") == 1, "both collectors' samples in one family"
    assert 'demo_value{device="a"} 1.5' in text and 'demo_value{device="b"} 2.0' in text
    assert kept == [1.5] and rig.published == 1 and rig.cycle.cycles == 1
    assert rig.sample("lens_collector_success", collector="a") == 1
    assert rig.sample("lens_collector_runs_total", collector="b", result="success") == 1
    assert rig.sample("lens_collector_last_success_timestamp_seconds", collector="a") == 1.8e9
    assert rig.sample("lens_collector_duration_seconds_count", collector="a") == 1


def test_a_failure_drops_the_collectors_families_until_it_recovers(
    rigs: list[Rig], caplog: pytest.LogCaptureFixture
) -> None:
    broken = {"now": False}
    lost: list[str] = []

    def collect() -> float:
        if broken["now"]:
            raise errors.SourceError("gpu_metrics: Input/output error")
        return 3.0

    rig = Rig(_binding("a", collect, lose=lost.append), _binding("b", lambda: 4.0))
    rigs.append(rig)
    rig.cycle.run()
    broken["now"] = True
    with caplog.at_level(logging.DEBUG, logger="lens.roles.node_agent.cycle"):
        for _ in range(3):
            rig.clock.advance(1)
            rig.cycle.run()
    text = rig.cycle.render_text()
    assert 'device="a"' not in text and 'device="b"' in text, "never stale values as fresh"
    assert rig.sample("lens_collector_success", collector="a") == 0
    assert rig.sample("lens_collector_runs_total", collector="a", result="error") == 3
    assert rig.sample("lens_collector_last_success_timestamp_seconds", collector="a") == 1.8e9
    assert lost == ["gpu_metrics: Input/output error"] * 3
    failures = [r for r in caplog.records if r.getMessage() == "collector failed"]
    assert len(failures) == 1 and failures[0].levelno == logging.ERROR, "logged on change only"
    broken["now"] = False
    with caplog.at_level(logging.INFO, logger="lens.roles.node_agent.cycle"):
        rig.clock.advance(1)
        rig.cycle.run()
    assert 'device="a"' in rig.cycle.render_text()
    assert any(r.getMessage() == "collector recovered" for r in caplog.records)


def test_no_data_is_logged_at_debug(rigs: list[Rig], caplog: pytest.LogCaptureFixture) -> None:
    def collect() -> float:
        raise errors.NoDataError("no amdgpu cards")

    rig = Rig(_binding("a", collect))
    rigs.append(rig)
    with caplog.at_level(logging.DEBUG, logger="lens.roles.node_agent.cycle"):
        rig.cycle.run()
    (record,) = [r for r in caplog.records if r.getMessage() == "collector failed"]
    assert record.levelno == logging.DEBUG
    assert rig.sample("lens_collector_success", collector="a") == 0


def test_a_slow_collector_times_out_and_is_never_run_twice_at_once(rigs: list[Rig]) -> None:
    release, entered = threading.Event(), threading.Event()
    calls = []

    def slow() -> float:
        calls.append(1)
        entered.set()
        release.wait(5)
        return 1.0

    rig = Rig(_binding("slow", slow, timeout=0.2), _binding("fast", lambda: 2.0))
    rigs.append(rig)
    rig.cycle.run()
    assert entered.is_set()
    assert rig.sample("lens_collector_runs_total", collector="slow", result="timeout") == 1
    assert rig.sample("lens_collector_success", collector="slow") == 0
    assert 'device="fast"' in rig.cycle.render_text()
    rig.clock.advance(1)
    rig.cycle.run()
    assert len(calls) == 1, "still running: skipped, not started again"
    assert rig.sample("lens_collector_skipped_total", collector="slow") == 1
    release.set()
    rig.cycle._slots[0].running.result(5)  # let the late run finish; its result is dropped
    rig.clock.advance(1)
    rig.cycle.run()
    assert len(calls) == 2 and 'device="slow"' in rig.cycle.render_text()


def test_each_collector_keeps_its_own_interval(rigs: list[Rig]) -> None:
    runs = {"fast": 0, "slow": 0}

    def counting(name: str):
        def collect() -> float:
            runs[name] += 1
            return float(runs[name])

        return collect

    rig = Rig(
        _binding("fast", counting("fast"), interval=1),
        _binding("slow", counting("slow"), interval=10),
    )
    rigs.append(rig)
    assert rig.cycle.tick_seconds == 1
    for _ in range(10):
        rig.cycle.run()
        rig.clock.advance(1)
    assert runs == {"fast": 10, "slow": 1}
    assert 'demo_value{device="slow"} 1.0' in rig.cycle.render_text(), "kept between its runs"
    rig.cycle.run()
    assert runs["slow"] == 2


def test_a_collector_that_does_not_apply_has_no_series(rigs: list[Rig]) -> None:
    rig = Rig(_binding("nvidia", lambda: 1.0, applicable=lambda: False))
    rigs.append(rig)
    rig.cycle.run()
    assert rig.cycle.render_text() == ""
    assert rig.sample("lens_collector_success", collector="nvidia") is None


def test_problems_are_counted(rigs: list[Rig]) -> None:
    rig = Rig(_binding("a", lambda: 1.0, problems=lambda _: ["x: EIO", "y: EIO"]))
    rigs.append(rig)
    rig.cycle.run()
    assert rig.sample("lens_collector_problems_total", collector="a") == 2
    assert rig.sample("lens_collector_success", collector="a") == 1


def test_names_are_unique() -> None:
    with pytest.raises(ValueError, match="unique"):
        CollectionCycle(
            [_binding("a", lambda: 1.0), _binding("a", lambda: 1.0)],
            clock=FakeClock(),
            metrics=CollectorMetrics(SelfMetrics(process=False)),
            publish=lambda: None,
        )


def test_a_crashing_collector_is_contained(
    rigs: list[Rig], caplog: pytest.LogCaptureFixture
) -> None:
    def crash() -> float:
        raise KeyError("temp1_input")

    rig = Rig(_binding("bad", crash), _binding("good", lambda: 1.0))
    rigs.append(rig)
    with caplog.at_level(logging.ERROR, logger="lens.roles.node_agent.cycle"):
        rig.cycle.run()
        rig.clock.advance(1)
        rig.cycle.run()
    assert 'device="good"' in rig.cycle.render_text() and rig.published == 2
    assert rig.sample("lens_collector_runs_total", collector="bad", result="error") == 2
    crashed = [r for r in caplog.records if r.getMessage() == "collector crashed"]
    assert len(crashed) == 1 and crashed[0].exc_info is not None


def test_series_go_when_the_hardware_does(rigs: list[Rig]) -> None:
    present = {"gpu": True}
    rig = Rig(_binding("a", lambda: 1.0, applicable=lambda: present["gpu"]))
    rigs.append(rig)
    rig.cycle.run()
    assert 'device="a"' in rig.cycle.render_text()
    present["gpu"] = False
    rig.clock.advance(1)
    rig.cycle.run()
    assert rig.cycle.render_text() == ""


def test_after_each_cycle_runs_once_the_results_are_kept_and_survives_a_crash(
    rigs: list[Rig], caplog: pytest.LogCaptureFixture
) -> None:
    kept: list[object] = []
    seen: list[list[object]] = []
    rig = Rig(_binding("a", lambda: 1.5, keep=kept.append))
    rigs.append(rig)

    def crash() -> None:
        raise RuntimeError("a bug after the cycle")

    rig.cycle.after_each(crash)
    rig.cycle.after_each(lambda: seen.append(list(kept)))
    rig.cycle.run()
    rig.clock.advance(1)
    rig.cycle.run()
    assert seen == [[1.5], [1.5, 1.5]]
    assert rig.cycle.cycles == 2
    assert "after-cycle callback failed" in caplog.text
