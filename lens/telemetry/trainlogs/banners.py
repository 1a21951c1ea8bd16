"""Lines a training process prints once as it starts training, which tell runs.py that a new run
may begin (../shared/formats/training-logs.md): Megatron-LM's `training ...` (rank 0, after the
setup timers; the original's only detector, REFERENCE.md 10.3), TorchTitan's `Training starts at
step N` (every rank), the Hugging Face Trainer's `***** Running training *****` (process zero)
and DeepSpeed's `DeepSpeed info: version=...` (rank 0, at deepspeed.initialize)."""

from __future__ import annotations

# Printed inside a line, after a logger's prefix and colours.
_INSIDE = ("***** Running training *****", "Training starts at step", "DeepSpeed info: version=")
# Megatron's banner is its whole message: the end of the line, after nothing or a prefix (a
# logger's "]" or ":", torchrun's "[default0]:"), so that prose ("resumed training ...") is none.
_MEGATRON = "training ..."
_PREFIX_ENDS = "]:|>)-"
MAX_LINE = 4096  # a banner line is short; longer lines are not searched


def is_banner(line: str) -> bool:
    """Whether `line` is a start-of-training banner of one of the frameworks."""
    if len(line) > MAX_LINE:
        return False
    stripped = line.rstrip()
    if stripped.endswith(_MEGATRON):
        before = stripped[: -len(_MEGATRON)].rstrip()
        return not before or before[-1] in _PREFIX_ENDS
    return any(banner in line for banner in _INSIDE)
