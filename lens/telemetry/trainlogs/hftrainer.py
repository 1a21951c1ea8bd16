"""The Hugging Face Trainer's log line (../shared/formats/training-logs.md section 5): a Python
dict's repr, `{'loss': 2.1234, 'grad_norm': 1.08, 'learning_rate': 4.9e-05, 'epoch': 0.05}`,
read with ast.literal_eval (single quotes: no JSON). It carries no step: the intake numbers a
pod's iterations in the order they arrive. Evaluation and end-of-training dicts (no 'loss')
are not iterations."""

from __future__ import annotations

import ast

from lens.telemetry.trainlogs.figures import IterationFigures

FRAMEWORK = "hf-trainer"
MAX_DICT = 4096  # characters: a log dict is far shorter; literal_eval is not fed more
_NAMES = {
    "loss": "lm_loss",
    "grad_norm": "grad_norm",
    "learning_rate": "learning_rate",
    "epoch": "epoch",
}


def looks_like(line: str) -> bool:
    return "{'loss':" in line


def parse(line: str, rank: int | None = None) -> IterationFigures | None:
    start = line.find("{'loss':")
    end = line.rfind("}")
    if start < 0 or end < start or end - start > MAX_DICT:
        return None
    try:
        logged = ast.literal_eval(line[start : end + 1])
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(logged, dict):
        return None
    values = {
        _NAMES[key]: float(value)
        for key, value in logged.items()
        if key in _NAMES and isinstance(value, int | float) and not isinstance(value, bool)
    }
    if "lm_loss" not in values:
        return None
    return IterationFigures(framework=FRAMEWORK, iteration=None, rank=rank, values=values)
