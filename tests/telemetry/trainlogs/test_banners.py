"""Start-of-training banners of each framework, through loggers' prefixes; other lines are none."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.telemetry.trainlogs import banners

MEGATRON = "training ..."
PRIMUS = "[20260822 12:00:01][rank-0/8][INFO    ] training ..."
TORCHTITAN = (
    "[titan] 2026-08-22 11:58:40,011 - root - INFO - \x1b[32mTraining starts at step 1\x1b[39m"
)
HF = "[INFO|trainer.py:2134] 2026-08-22 11:58:40,011 >> ***** Running training *****"
DEEPSPEED = (
    "[2026-08-22 11:58:40,011] [INFO] [logging.py:128:log_dist] [Rank 0] DeepSpeed info: "
    "version=0.15.4, git-hash=unknown, git-branch=unknown"
)


@pytest.mark.parametrize(
    "line",
    [
        MEGATRON,
        MEGATRON + "  \r",
        PRIMUS,
        "[default0]:training ...",
        "0: training ...",
        TORCHTITAN,
        "[titan] 2025-02-03 09:19:51 - root - INFO - Training starts at step 1001, with local "
        "batch size 8",
        HF,
        DEEPSPEED,
    ],
)
def test_each_frameworks_banner(line: str) -> None:
    assert banners.is_banner(line)


@pytest.mark.parametrize(
    "line",
    [
        "",
        "done with setup ...",
        "resumed training ...",
        "[after training is done] datetime: 2026-08-22 13:00:00",
        "[before the start of training step] datetime: 2026-08-22 11:58:41",
        " iteration      100/   10000 | consumed samples:         6400 |",
        "{'loss': 2.1234, 'grad_norm': 1.08, 'learning_rate': 4.9e-05, 'epoch': 0.05}",
        "x" * banners.MAX_LINE + " ***** Running training *****",
    ],
)
def test_other_lines_are_no_banner(line: str) -> None:
    assert not banners.is_banner(line)


@given(st.text(max_size=300))
def test_any_text_is_judged_without_error(line: str) -> None:
    assert banners.is_banner(line) in (True, False)
