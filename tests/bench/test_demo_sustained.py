"""The definition of a sustained speed, on samples written by hand; and `python -m bench demo
--mode sustained` run on the small preset at one speed."""

from __future__ import annotations

import dataclasses

import pytest

from bench import demo_sustained
from bench.demo_sustained import Sample, judge
from tests.bench.benchrun import bench_figures

NO_ERRORS = {"database_locked": 0, "collector_overran": 0, "other": 0}


def _samples(**changed: object) -> list[Sample]:
    """Ten samples 5 s apart of a demo at 60: 300 s of the cluster's time each, all 16 GPUs live,
    13 of 13 allocated GPUs held; `changed` replaces a field in the fifth."""
    samples = [
        Sample(
            real=5.0 * i,
            now=1e9 + 300.0 * i,
            clock_rate=60.0,
            gpus=16,
            live=16,
            held=13,
            allocated=13,
        )
        for i in range(10)
    ]
    samples[4] = dataclasses.replace(samples[4], **changed)
    return samples


def test_a_window_where_everything_held_is_sustained() -> None:
    figures = judge(_samples(), speed=60, gpus=16, errors=NO_ERRORS, skipped=0)
    assert figures["sustained"] and all(figures["checks"].values())
    assert (figures["achieved_rate"], figures["achieved_to_asked_ratio"]) == (60.0, 1.0)
    assert figures["agents_skipped_slots"] == [0, 540]  # 45 min of the cluster's time, 5 s each


@pytest.mark.parametrize(
    ("changed", "failed"),
    [
        ({"clock_rate": 30.0}, "clock_kept"),  # the pacer slowed it once
        ({"live": 15}, "every_gpu_live"),
        ({"gpus": 15, "live": 15}, "every_gpu_live"),  # a GPU not even listed
        ({"held": 10}, "every_allocated_gpu_held"),  # 3 short of 13: over the slack of 2
    ],
)
def test_one_bad_sample_fails_the_window(changed: dict[str, object], failed: str) -> None:
    figures = judge(_samples(**changed), speed=60, gpus=16, errors=NO_ERRORS, skipped=0)
    assert not figures["sustained"]
    assert [name for name, held in figures["checks"].items() if not held] == [failed]


def test_errors_skipped_slots_and_a_slow_clock_fail_the_window() -> None:
    locked = {**NO_ERRORS, "database_locked": 1}
    assert not judge(_samples(), speed=60, gpus=16, errors=locked, skipped=0)["checks"]["no_errors"]
    # 54 of 540 slots skipped is the most allowed.
    assert judge(_samples(), speed=60, gpus=16, errors=NO_ERRORS, skipped=54)["sustained"]
    assert not judge(_samples(), speed=60, gpus=16, errors=NO_ERRORS, skipped=55)["sustained"]
    slow = [dataclasses.replace(s, now=1e9 + 280.0 * i) for i, s in enumerate(_samples())]
    figures = judge(slow, speed=60, gpus=16, errors=NO_ERRORS, skipped=0)
    assert figures["achieved_rate"] == 56.0 and not figures["checks"]["clock_kept"]


def test_the_held_slack_and_the_window() -> None:
    assert demo_sustained.held_enough(97, 100) and not demo_sustained.held_enough(96, 100)
    assert demo_sustained.held_enough(600, 618) and not demo_sustained.held_enough(599, 618)
    assert demo_sustained.window_seconds(60) == 60  # 10 minutes of the cluster's: 10 s, at least 60
    assert demo_sustained.window_seconds(4) == 150
    assert demo_sustained.window_seconds(1) == 180  # at most


@pytest.mark.timeout(400)
def test_the_sustained_mode_tries_a_speed_and_stops_the_demo() -> None:
    figures = bench_figures(
        "demo",
        "--mode",
        "sustained",
        "--presets",
        "small",
        "--speeds",
        "60",
        "--window",
        "20",
        timeout=380,
    )
    assert figures["mode"] == "sustained" and figures["cli_start_s"] > 0
    small = figures["presets"]["small"]
    (trial,) = small["trials"]
    assert trial["speed"] == 60 and trial["sustained"] == all(trial["checks"].values())
    assert small["highest_sustained"] == (60 if trial["sustained"] else None)
    assert trial["samples"] >= 4 and trial["window_s"] >= 20  # a shorter window than defined
    assert trial["live_gpus_min"] <= 16 and 0 < trial["achieved_rate"] <= 60 * 1.05
    assert (trial["exit"], trial["files_left"]) == (0, False) and trial["stop_s"] > 0
