from __future__ import annotations

import logging

import pytest

from lens.runtime.clock import FakeClock
from lens.runtime.health import Health
from lens.runtime.selfmetrics import SelfMetrics


def _health(clock: FakeClock) -> tuple[Health, SelfMetrics]:
    metrics = SelfMetrics(process=False)
    return Health(clock=clock, metrics=metrics, stale_after=30), metrics


def test_not_ready_until_checked_then_follows_the_dependency() -> None:
    clock = FakeClock()
    health, metrics = _health(clock)
    state = {"up": True}

    def database() -> None:
        if not state["up"]:
            raise ConnectionError("connection refused\nmore detail")

    health.add_readiness("database", database)
    verdict = health.readiness()
    assert not verdict.ok
    assert verdict.checks[0].detail == "not checked yet"

    health.evaluate_readiness()
    assert health.readiness().ok
    assert (
        metrics.registry.get_sample_value("lens_readiness_check_success", {"check": "database"})
        == 1
    )

    state["up"] = False
    health.evaluate_readiness()
    verdict = health.readiness()
    assert not verdict.ok
    assert verdict.checks[0].detail == "ConnectionError: connection refused"
    assert (
        metrics.registry.get_sample_value("lens_readiness_check_success", {"check": "database"})
        == 0
    )
    assert verdict.to_json()["status"] == "failing"


def test_a_result_that_is_too_old_counts_as_failing() -> None:
    clock = FakeClock()
    health, _ = _health(clock)
    health.add_readiness("api", lambda: None)
    health.evaluate_readiness()
    clock.advance(29)
    assert health.readiness().ok
    clock.advance(2)
    verdict = health.readiness()
    assert not verdict.ok
    assert verdict.checks[0].detail == "last checked 31 s ago"


def test_liveness_asks_every_probe() -> None:
    health, _ = _health(FakeClock())
    problems: dict[str, str | None] = {"loops": None}
    health.add_liveness("loops", lambda: problems["loops"])
    assert health.liveness().ok
    problems["loops"] = "loops stalled: gpu"
    verdict = health.liveness()
    assert not verdict.ok
    assert verdict.to_json()["checks"] == {
        "loops": {"ok": False, "detail": "loops stalled: gpu", "checked_at": None}
    }


def test_readiness_changes_are_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    health, _ = _health(FakeClock())
    up = {"value": False}

    def check() -> None:
        if not up["value"]:
            raise RuntimeError("down")

    health.add_readiness("db", check)
    caplog.set_level(logging.INFO, logger="lens.runtime.health")
    for value in (False, False, True, True, False):
        up["value"] = value
        health.evaluate_readiness()
    assert [(r.levelname, r.ok) for r in caplog.records] == [  # type: ignore[attr-defined]
        ("WARNING", False),
        ("INFO", True),
        ("WARNING", False),
    ]
