"""DeepSpeed's engine, throughput-timer and pipeline lines."""

from __future__ import annotations

from lens.telemetry.trainlogs import deepspeed

STAMP = "[2026-08-22 12:00:01,482] [INFO] [logging.py:128:log_dist] [Rank 3] "


def test_the_engine_line_gives_the_step_and_learning_rate() -> None:
    line = STAMP + "step=100, skipped=2, lr=[1.4992e-05, 1.4992e-05], mom=[(0.9, 0.95)]"
    found = deepspeed.parse(line)
    assert found is not None
    assert (found.framework, found.iteration, found.rank, found.at) == (
        "deepspeed",
        100,
        3,
        1787400001.482,
    )
    assert found.values == {"skipped_iterations_number": 2, "learning_rate": 1.4992e-05}


def test_the_throughput_timer_gives_samples_and_memory() -> None:
    line = (
        "epoch=0/micro_step=400/global_step=100, RunningAvgSamplesPerSec=31.27, "
        "CurrSamplesPerSec=31.5, MemAllocated=42.13GB, MaxMemAllocated=61.02GB"
    )
    found = deepspeed.parse(line, 0)
    assert found is not None and (found.iteration, found.rank, found.at) == (100, 0, None)
    assert found.values == {
        "samples_per_second": 31.5,
        "mem_usages": 42.13,
        "mem_max_usage": 61.02,
    }


def test_the_pipeline_engine_line_gives_loss_and_iteration_time() -> None:
    found = deepspeed.parse("steps: 100 loss: 3.4125 iter time (s): 2.046 samples/sec: 31.281")
    assert found is not None and found.iteration == 100
    assert found.values == {
        "lm_loss": 3.4125,
        "elapsed_time_per_iteration_ms": 2046.0,
        "samples_per_second": 31.281,
    }


def test_other_lines_are_no_iteration() -> None:
    assert deepspeed.parse(STAMP + "DeepSpeed info: version=0.16.4") is None
    assert deepspeed.parse("time_step=3 nothing else") is None
