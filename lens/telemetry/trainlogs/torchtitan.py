"""TorchTitan's step line (../shared/formats/training-logs.md section 3), colours removed:
`[titan] 2026-08-22 12:00:01,482 - root - INFO - step: 50  loss:  3.41250  grad_norm:  0.8731
memory: 61.22GiB(32.01%)  tps: 7,842  tflops: 451.37  mfu: 34.72%` — older versions lack
tflops and grad_norm; `mfu: N/A` when the peak is unknown. Validation steps are not training
iterations."""

from __future__ import annotations

import math
import re

from lens.telemetry.trainlogs import text
from lens.telemetry.trainlogs.figures import IterationFigures

FRAMEWORK = "torchtitan"
_STAMP = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)?)")
_STEP = re.compile(r"(?<!validate )\bstep:\s*(\d+)")
_FIELD = re.compile(r"(\w+):\s*(\S+)")
_NAMES = {"loss": "lm_loss", "grad_norm": "grad_norm", "tps": "tokens_per_gpu", "tflops": "tflops"}
# memory: 61.22GiB(32.01%), read without the general pattern (text.numbers)
_MEMORY = re.compile(r"(\d+(?:\.\d*)?)GiB\((\d+(?:\.\d*)?)%\)")


def looks_like(line: str) -> bool:
    return "step:" in line and "loss:" in line


def parse(line: str, rank: int | None = None) -> IterationFigures | None:
    step = _step(line)
    if step is None:
        return None
    values: dict[str, float] = {}
    for key, value in _FIELD.findall(line, step.end()):
        name = _NAMES.get(key)
        if name is not None:
            read = text.number(value)
            if read is not None:
                values[name] = read
        elif key == "memory":
            _memory(value, values)
        elif key == "mfu":
            mfu = text.number(value)  # N/A: none
            if mfu is not None:
                values["mfu"] = mfu
    stamp = _STAMP.search(line, 0, step.start())
    at = text.utc_seconds(stamp.group(1), text.ISO_LAYOUT) if stamp else None
    return IterationFigures(
        framework=FRAMEWORK, iteration=int(step.group(1)), at=at, rank=rank, values=values
    )


def _step(line: str) -> re.Match[str] | None:
    """The training step's `step: N` (not a validation step's): the pattern tried only where
    the text "step:" is, which is once in a line."""
    at = line.find("step:")
    while at >= 0:
        found = _STEP.match(line, at)
        if found is not None:
            return found
        at = line.find("step:", at + 1)
    return None


def _memory(value: str, into: dict[str, float]) -> None:
    """61.22GiB(32.01%): the maximum reserved in GiB and in percent of the GPU's."""
    plain = _MEMORY.fullmatch(value)
    found = [float(plain[1]), float(plain[2])] if plain is not None else []
    if plain is None or not all(math.isfinite(f) for f in found):
        found = text.numbers(value)
    for name, figure in zip(("mem_usages", "mem_usage_ratio"), found, strict=False):
        into[name] = figure
