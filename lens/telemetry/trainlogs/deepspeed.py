"""DeepSpeed's lines (../shared/formats/training-logs.md section 4): the engine's
`step=100, skipped=0, lr=[1.4992e-05], mom=[(0.9, 0.95)]`, the throughput timer's
`epoch=0/micro_step=400/global_step=100, RunningAvgSamplesPerSec=31.27, CurrSamplesPerSec=31.5,
MemAllocated=42.13GB, MaxMemAllocated=61.02GB` and the pipeline engine's `steps: 100 loss:
3.4125 iter time (s): 2.046 samples/sec: 31.281`, after the logger's `[2026-08-22
12:00:01,482] [INFO] [file:line:func] [Rank 0] `. Two lines may tell of one step."""

from __future__ import annotations

import re

from lens.telemetry.trainlogs import text
from lens.telemetry.trainlogs.figures import IterationFigures

FRAMEWORK = "deepspeed"
_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)?)\]")
_RANK = re.compile(r"\[Rank (\d+)\]")
_ENGINE = re.compile(r"\bstep=(\d+), skipped=(\d+), lr=\[([^\],]*)")
_TIMER = re.compile(r"global_step=(\d+),(.*)")
_PIPE = re.compile(r"\bsteps: (\d+) loss: (\S+) iter time \(s\): (\S+) samples/sec: (\S+)")
_TIMER_NAMES = {
    "CurrSamplesPerSec": "samples_per_second",
    "MemAllocated": "mem_usages",
    "MaxMemAllocated": "mem_max_usage",
}


def looks_like(line: str) -> bool:
    return "step=" in line or "steps: " in line


def parse(line: str, rank: int | None = None) -> IterationFigures | None:
    values: dict[str, float] = {}
    iteration = _engine(line, values)
    if iteration is None:
        iteration = _timer(line, values)
    if iteration is None:
        iteration = _pipeline(line, values)
    if iteration is None:
        return None
    stamp = _STAMP.search(line) if line.startswith("[") else None
    at = text.utc_seconds(stamp.group(1), text.ISO_LAYOUT) if stamp else None
    said = _RANK.search(line) if "[Rank " in line else None
    rank = int(said.group(1)) if said else rank
    return IterationFigures(
        framework=FRAMEWORK, iteration=iteration, at=at, rank=rank, values=values
    )


def _engine(line: str, values: dict[str, float]) -> int | None:
    engine = _ENGINE.search(line) if "step=" in line else None
    if engine is None:
        return None
    values["skipped_iterations_number"] = float(engine.group(2))
    _put(values, "learning_rate", engine.group(3))
    return int(engine.group(1))


def _timer(line: str, values: dict[str, float]) -> int | None:
    timer = _TIMER.search(line) if "global_step=" in line else None
    if timer is None:
        return None
    for field in timer.group(2).split(","):
        key, _, value = field.strip().partition("=")
        if key in _TIMER_NAMES:
            _put(values, _TIMER_NAMES[key], value)
    return int(timer.group(1))


def _pipeline(line: str, values: dict[str, float]) -> int | None:
    pipe = _PIPE.search(line) if "steps: " in line else None
    if pipe is None:
        return None
    _put(values, "lm_loss", pipe.group(2))
    milliseconds = text.number(pipe.group(3), scale=1000)
    if milliseconds is not None:
        values["elapsed_time_per_iteration_ms"] = milliseconds
    _put(values, "samples_per_second", pipe.group(4))
    return int(pipe.group(1))


def _put(values: dict[str, float], name: str, value: str) -> None:
    figure = text.number(value)
    if figure is not None:
        values[name] = figure
