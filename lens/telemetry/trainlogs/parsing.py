"""One container log line to an iteration's figures, whichever framework printed it: cleaned
(text.py), then offered to each parser whose cheap test it passes — most lines of a training
log are no iteration line, and are turned away by substring tests alone."""

from __future__ import annotations

from collections.abc import Callable

from lens.telemetry.trainlogs import deepspeed, hftrainer, megatron, text, torchtitan
from lens.telemetry.trainlogs.figures import IterationFigures

Parser = tuple[Callable[[str], bool], Callable[[str, int | None], IterationFigures | None]]
_PARSERS: tuple[Parser, ...] = tuple(
    (framework.looks_like, framework.parse)
    for framework in (megatron, torchtitan, deepspeed, hftrainer)
)


def parse_line(line: str) -> IterationFigures | None:
    """The iteration `line` tells of, or None (any other line, or one too long to be one)."""
    if len(line) > text.MAX_LINE:
        return None
    for looks_like, _ in _PARSERS:
        if looks_like(line):
            break
    else:
        return None
    cleaned, rank = text.clean(line)
    for looks_like, parse in _PARSERS:
        if looks_like(cleaned):
            found = parse(cleaned, rank)
            if found is not None:
                return found
    return None
