"""The Hugging Face Trainer's log line (../shared/formats/training-logs.md section 5): a Python
dict's repr, `{'loss': 2.1234, 'grad_norm': 1.08, 'learning_rate': 4.9e-05, 'epoch': 0.05}`,
read as the Python literal it is (single quotes: no JSON; ast.literal_eval where a pattern for
the usual plain dicts does not do). It carries no step: the intake numbers a pod's iterations in
the order they arrive. Evaluation and end-of-training dicts (no 'loss') are not iterations;
numbers past a double's range are no figures."""

from __future__ import annotations

import ast
import math
import re
import sys

from lens.telemetry.trainlogs.figures import IterationFigures

FRAMEWORK = "hf-trainer"
MAX_DICT = 4096  # characters: a log dict is far shorter; literal_eval is not fed more
_MAX_FLOAT = sys.float_info.max  # an integer past it is no figure: float() would raise
_NAMES = {
    "loss": "lm_loss",
    "grad_norm": "grad_norm",
    "learning_rate": "learning_rate",
    "epoch": "epoch",
}

# The dicts the Trainer prints: plain keys, plain numbers. Read without literal_eval (most of
# the cost of a line), which still reads anything else. The numbers are Python literals as
# literal_eval takes them (no leading zeros on an integer, a sign allowed).
_NUMBER = r"[-+]?(?:(?:[1-9][0-9]*|0)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_SIMPLE = re.compile(rf"\{{'[a-z_]+': {_NUMBER}(?:, '[a-z_]+': {_NUMBER})*\}}")
_PAIR = re.compile(rf"'([a-z_]+)': ({_NUMBER})")


def looks_like(line: str) -> bool:
    return "{'loss':" in line


def parse(line: str, rank: int | None = None) -> IterationFigures | None:
    start = line.find("{'loss':")
    end = line.rfind("}")
    if start < 0 or end < start or end - start > MAX_DICT:
        return None
    logged = line[start : end + 1]
    read: dict[str, float] | None
    if _SIMPLE.fullmatch(logged) is not None:
        pairs = _PAIR.findall(logged)
        read = {_NAMES[key]: float(value) for key, value in pairs if key in _NAMES}
    else:
        read = _literal(logged)
    if read is None:
        return None
    values = {name: figure for name, figure in read.items() if math.isfinite(figure)}
    if "lm_loss" not in values:
        return None
    return IterationFigures(framework=FRAMEWORK, iteration=None, rank=rank, values=values)


def _literal(logged: str) -> dict[str, float] | None:
    """The figures of a dict in any other form literal_eval reads; None for anything else."""
    try:
        found = ast.literal_eval(logged)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(found, dict):
        return None
    numbers = {
        _NAMES[key]: value
        for key, value in found.items()
        if key in _NAMES and isinstance(value, int | float) and not isinstance(value, bool)
    }
    return {name: float(value) for name, value in numbers.items() if abs(value) <= _MAX_FLOAT}
