"""Megatron-LM's iteration line and AMD Primus's rewrite of it (../shared/formats/
training-logs.md sections 1 and 2): ` | `-separated `key: value` segments after an optional
` [YYYY-MM-DD HH:MM:SS(.ffffff)]` and `iteration N/ M`. Segments are read by their key, in any
order, so Megatron's versions (no timestamp before core 0.9, energy and power since 0.19) and
Primus's (legacy: memory before throughput, "a/b" pairs; current: "(avg b)", tokens/s
harmonic mean, memory last) are one parser."""

from __future__ import annotations

import math
import re

from lens.telemetry.trainlogs import text
from lens.telemetry.trainlogs.figures import IterationFigures

FRAMEWORK = "megatron"
# ` [2026-08-22 12:00:01.482113] iteration      100/   10000`: the first "iteration N/ M",
# then the stamp right before it, if any (a pattern starting with the word is found by a
# fast scan; one starting with an optional stamp is tried at every character of a prefix).
_ITERATION = re.compile(r"iteration\s+(\d+)\s*/\s*(\d+)")
_STAMP = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\]\s*")

# How a segment is read: its first number (and the second of an "a/b" pair or "(avg b)"), the
# four figures of a memory segment, or a loss.
_FIRST, _MEMORY, _LOSS = 0, 1, 2
Spec = tuple[int, str, str]  # how, the figure's name, the name of its second number

# By key as printed, in the frameworks' capitals; keys are matched in any case.
_KEYS: dict[str, Spec] = {
    "consumed samples": (_FIRST, "consumed_samples", ""),
    "skipped samples": (_FIRST, "skipped_samples", ""),
    "elapsed time per iteration (ms)": (
        _FIRST,
        "elapsed_time_per_iteration_ms",
        "elapsed_time_per_iteration_avg_ms",
    ),
    "throughput per GPU (TFLOP/s/GPU)": (_FIRST, "tflops", "tflops_avg"),
    "compute per GPU (TFLOP/s/GPU)": (_FIRST, "tflops", "tflops_avg"),
    "tokens per GPU (tokens/s/GPU)": (_FIRST, "tokens_per_gpu", "tokens_per_gpu_avg"),
    "tokens/s/GPU inst/harmonic mean": (_FIRST, "tokens_per_gpu", "tokens_per_gpu_avg"),
    "energy per GPU (J/iter/GPU)": (_FIRST, "energy_per_gpu_joules", ""),
    "power per GPU (W/GPU)": (_FIRST, "power_per_gpu_watts", ""),
    "learning rate": (_FIRST, "learning_rate", ""),
    "decoupled learning rate": (_FIRST, "decoupled_learning_rate", ""),
    "global batch size": (_FIRST, "global_batch_size", ""),
    "loss scale": (_FIRST, "loss_scale", ""),
    "grad norm": (_FIRST, "grad_norm", ""),
    "num zeros": (_FIRST, "num_zeros", ""),
    "params norm": (_FIRST, "params_norm", ""),
    "number of skipped iterations": (_FIRST, "skipped_iterations_number", ""),
    "number of nan iterations": (_FIRST, "nan_iterations_number", ""),
    "hip mem usage/free/total/usage_ratio": (_MEMORY, "", ""),
    "rocm mem usage/free/total/usage_ratio": (_MEMORY, "", ""),
    "mem usages": (_FIRST, "mem_usages", ""),
    "seq_length": (_FIRST, "actual_seqlen", ""),
    "lm loss": (_LOSS, "lm_loss", ""),
}
_SPECS = {key.lower(): spec for key, spec in _KEYS.items()}
# A segment's key as split from the line (" key", Megatron's and Primus's " | " joins): found
# without strip() and lower() for the keys as printed, which is nearly all of them.
_PRINTED = {f" {key}": spec for key, spec in _KEYS.items()}
_MAX_MEMORY: Spec = (_FIRST, "mem_max_usage", "")
_MEMORY_NAMES = ("mem_usages", "mem_free", "mem_total", "mem_usage_ratio")
# The usual shapes of pairs and memory, read without the general pattern (text.numbers).
_DECIMAL = r"(\d+(?:\.\d*)?)"
_AVERAGE = re.compile(rf"\s*{_DECIMAL}\s*\(avg\s*{_DECIMAL}\)\s*")
_MEMORY_VALUE = re.compile(rf"\s*{_DECIMAL}GB/\s*{_DECIMAL}GB/\s*{_DECIMAL}GB/\s*{_DECIMAL}%\s*")


def looks_like(line: str) -> bool:
    return "iteration" in line and "|" in line


def parse(line: str, rank: int | None = None) -> IterationFigures | None:
    """The figures of a Megatron or Primus iteration line; None for any other line."""
    segments = line.split("|")
    head = _ITERATION.search(segments[0])
    if head is None:
        return None
    iteration, target = head.groups()
    values: dict[str, float] = {"target_iteration": float(int(target))}
    for segment in segments[1:]:
        key, colon, value = segment.partition(":")
        if not colon:
            continue
        spec = _PRINTED.get(key) or _spec(key)
        if spec is None:
            continue
        how, name, second = spec
        if how == _FIRST:
            if "/" not in value and "(" not in value:
                try:
                    figure = float(value)  # most segments: one plain number
                except ValueError:
                    figure = math.nan
                if figure - figure == 0.0:  # finite ("nan": the pattern finds no number)
                    values[name] = figure
                    continue
            _first(value, name, second, values)
        elif how == _LOSS:
            loss = text.number(value)
            if loss is not None:
                values[name] = loss
        else:
            _memory(value, values)
    return IterationFigures(
        framework=FRAMEWORK,
        iteration=int(iteration),
        at=_at(segments[0], head.start()),
        rank=rank,
        values=values,
    )


def _at(head: str, iteration: int) -> float | None:
    """The time of the stamp that ends right where the word "iteration" starts; None without."""
    bracket = head.rfind("[", 0, iteration)
    stamp = _STAMP.fullmatch(head, bracket, iteration) if bracket >= 0 else None
    return text.utc_seconds(stamp.group(1), text.ISO_LAYOUT) if stamp is not None else None


def _spec(key: str) -> Spec | None:
    """How to read the segment of a key not printed as usual (other case, spacing), a rank's
    maximum memory (`rank-7 rocm max mem ...`) or a loss of its own (`mtp_1 loss`)."""
    key = key.strip().lower()
    spec = _SPECS.get(key)
    if spec is not None:
        return spec
    if key.startswith("rank-") and key.endswith("max mem usage/usage_ratio"):
        return _MAX_MEMORY
    if key.endswith("loss"):
        return (_LOSS, key, "")
    return None


def _first(value: str, name: str, second: str, into: dict[str, float]) -> None:
    """A segment's first number as `name`; its second (an "a/b" pair, "(avg b)") as `second`."""
    found = _plain(value)
    if found is None:
        found = text.numbers(value)
    if found:
        into[name] = found[0]
    if second and len(found) > 1:
        into[second] = found[1]


def _plain(value: str) -> list[float] | None:
    """The numbers of "5123.4/5140.9" or "487.2 (avg 485.9)" the quick way; None for
    anything else, which the pattern reads. (Their numbers are those it would find.)"""
    average = _AVERAGE.fullmatch(value) if "(" in value else None
    try:
        if average is not None:
            found = [float(average[1]), float(average[2])]
        else:
            found = [float(part) for part in value.split("/")]
    except ValueError:
        return None
    return found if all(math.isfinite(f) for f in found) else None


def _memory(value: str, into: dict[str, float]) -> None:
    """usage/free/total/usage_ratio: 151.27GB/40.71GB/191.98GB/78.79% (GiB, percent)."""
    plain = _MEMORY_VALUE.fullmatch(value)
    found = [float(part) for part in plain.groups()] if plain is not None else []
    if not all(math.isfinite(f) for f in found) or plain is None:
        found = text.numbers(value)
    for name, figure in zip(_MEMORY_NAMES, found, strict=False):
        into[name] = figure
