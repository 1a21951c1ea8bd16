"""Megatron-LM's iteration line and AMD Primus's rewrite of it (../shared/formats/
training-logs.md sections 1 and 2): ` | `-separated `key: value` segments after an optional
` [YYYY-MM-DD HH:MM:SS(.ffffff)]` and `iteration N/ M`. Segments are read by their key, in any
order, so Megatron's versions (no timestamp before core 0.9, energy and power since 0.19) and
Primus's (legacy: memory before throughput, "a/b" pairs; current: "(avg b)", tokens/s
harmonic mean, memory last) are one parser."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from lens.telemetry.trainlogs import text
from lens.telemetry.trainlogs.figures import IterationFigures

FRAMEWORK = "megatron"
_HEAD = re.compile(
    r"(?:\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\]\s*)?iteration\s+(\d+)\s*/\s*(\d+)"
)

Reader = Callable[[str, dict[str, float]], None]


def _first(name: str, avg: str = "") -> Reader:
    """A segment's first number as `name`; its second (an "a/b" pair, "(avg b)") as `avg`."""

    def read(value: str, into: dict[str, float]) -> None:
        found = _plain(value)
        if found is None:
            found = text.numbers(value)
        if found:
            into[name] = found[0]
        if avg and len(found) > 1:
            into[avg] = found[1]

    return read


def _plain(value: str) -> list[float] | None:
    """The numbers of "5123.4" or "5123.4/5140.9" the quick way (most segments); None for
    anything else ("487.2 (avg 485.9)", "nan"), which the pattern reads."""
    try:
        found = [float(part) for part in value.split("/")]
    except ValueError:
        return None
    return found if all(math.isfinite(f) for f in found) else None


def _memory(value: str, into: dict[str, float]) -> None:
    """usage/free/total/usage_ratio: 151.27GB/40.71GB/191.98GB/78.79% (GiB, percent)."""
    found = text.numbers(value)
    for name, figure in zip(
        ("mem_usages", "mem_free", "mem_total", "mem_usage_ratio"), found, strict=False
    ):
        into[name] = figure


_READERS: dict[str, Reader] = {
    "consumed samples": _first("consumed_samples"),
    "skipped samples": _first("skipped_samples"),
    "elapsed time per iteration (ms)": _first(
        "elapsed_time_per_iteration_ms", "elapsed_time_per_iteration_avg_ms"
    ),
    "throughput per gpu (tflop/s/gpu)": _first("tflops", "tflops_avg"),
    "compute per gpu (tflop/s/gpu)": _first("tflops", "tflops_avg"),
    "tokens per gpu (tokens/s/gpu)": _first("tokens_per_gpu", "tokens_per_gpu_avg"),
    "tokens/s/gpu inst/harmonic mean": _first("tokens_per_gpu", "tokens_per_gpu_avg"),
    "energy per gpu (j/iter/gpu)": _first("energy_per_gpu_joules"),
    "power per gpu (w/gpu)": _first("power_per_gpu_watts"),
    "learning rate": _first("learning_rate"),
    "decoupled learning rate": _first("decoupled_learning_rate"),
    "global batch size": _first("global_batch_size"),
    "loss scale": _first("loss_scale"),
    "grad norm": _first("grad_norm"),
    "num zeros": _first("num_zeros"),
    "params norm": _first("params_norm"),
    "number of skipped iterations": _first("skipped_iterations_number"),
    "number of nan iterations": _first("nan_iterations_number"),
    "hip mem usage/free/total/usage_ratio": _memory,
    "rocm mem usage/free/total/usage_ratio": _memory,
    "mem usages": _first("mem_usages"),
    "seq_length": _first("actual_seqlen"),
}


def looks_like(line: str) -> bool:
    return "iteration" in line and "|" in line


def parse(line: str, rank: int | None = None) -> IterationFigures | None:
    """The figures of a Megatron or Primus iteration line; None for any other line."""
    segments = line.split("|")
    head = _HEAD.search(segments[0])
    if head is None:
        return None
    stamp, iteration, target = head.groups()
    values: dict[str, float] = {"target_iteration": float(int(target))}
    for segment in segments[1:]:
        key, colon, value = segment.partition(":")
        if not colon:
            continue
        key = key.strip().lower()
        reader = _READERS.get(key)
        if reader is not None:
            reader(value, values)
        elif key.startswith("rank-") and key.endswith("max mem usage/usage_ratio"):
            _first("mem_max_usage")(value, values)
        elif key.endswith("loss"):
            loss = text.number(value)
            if loss is not None:
                values["lm_loss" if key == "lm loss" else key] = loss
    at = text.utc_seconds(stamp, "%Y-%m-%d %H:%M:%S") if stamp else None
    return IterationFigures(
        framework=FRAMEWORK, iteration=int(iteration), at=at, rank=rank, values=values
    )
