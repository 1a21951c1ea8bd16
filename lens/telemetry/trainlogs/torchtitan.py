"""TorchTitan's step line (../shared/formats/training-logs.md section 3), colours removed:
`[titan] 2026-08-22 12:00:01,482 - root - INFO - step: 50  loss:  3.41250  grad_norm:  0.8731
memory: 61.22GiB(32.01%)  tps: 7,842  tflops: 451.37  mfu: 34.72%` — older versions lack
tflops and grad_norm; `mfu: N/A` when the peak is unknown. Validation steps are not training
iterations."""

from __future__ import annotations

import re

from lens.telemetry.trainlogs import text
from lens.telemetry.trainlogs.figures import IterationFigures

FRAMEWORK = "torchtitan"
_STAMP = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)?)")
_STEP = re.compile(r"(?<!validate )\bstep:\s*(\d+)")
_FIELD = re.compile(r"(\w+):\s*(\S+)")
_NAMES = {"loss": "lm_loss", "grad_norm": "grad_norm", "tps": "tokens_per_gpu", "tflops": "tflops"}


def looks_like(line: str) -> bool:
    return "step:" in line and "loss:" in line


def parse(line: str, rank: int | None = None) -> IterationFigures | None:
    step = _STEP.search(line)
    if step is None:
        return None
    values: dict[str, float] = {}
    for key, value in _FIELD.findall(line, step.end()):
        if key == "memory":  # 61.22GiB(32.01%)
            found = text.numbers(value)
            for name, figure in zip(("mem_usages", "mem_usage_ratio"), found, strict=False):
                values[name] = figure
        elif key == "mfu":
            mfu = text.number(value)  # N/A: none
            if mfu is not None:
                values["mfu"] = mfu
        elif key in _NAMES:
            read = text.number(value)
            if read is not None:
                values[_NAMES[key]] = read
    stamp = _STAMP.search(line, 0, step.start())
    at = text.utc_seconds(stamp.group(1), "%Y-%m-%d %H:%M:%S") if stamp else None
    return IterationFigures(
        framework=FRAMEWORK, iteration=int(step.group(1)), at=at, rank=rank, values=values
    )
