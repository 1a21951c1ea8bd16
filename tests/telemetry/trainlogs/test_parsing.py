"""One log line, whichever framework printed it, through its prefixes: the right parser's
figures; any other line, or any text at all, no figures and no exception."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lens.telemetry.trainlogs import parsing, text
from tests.telemetry.trainlogs.test_megatron import CORE_0_19, PRIMUS
from tests.telemetry.trainlogs.test_torchtitan import COLOURED


def test_each_framework_through_rank_prefixes() -> None:
    found = parsing.parse_line("[default3]:" + PRIMUS)
    assert found is not None and (found.framework, found.iteration, found.rank) == (
        "megatron",
        100,
        3,
    )
    found = parsing.parse_line("[rank5]:" + COLOURED)
    assert found is not None and (found.framework, found.rank) == ("torchtitan", 5)
    found = parsing.parse_line("0: steps: 7 loss: 2.5 iter time (s): 1.000 samples/sec: 8.000")
    assert found is not None and (found.framework, found.iteration, found.rank) == (
        "deepspeed",
        7,
        0,
    )
    found = parsing.parse_line("{'loss': 2.0, 'learning_rate': 1e-05, 'epoch': 0.01}")
    assert found is not None and found.framework == "hf-trainer"


def test_primus_through_its_logger_prefix_in_colour() -> None:
    prefix = "\x1b[32m[20260822 12:00:01][rank-7/8]\x1b[0m\x1b[36m<INFO> \x1b[0m"
    found = parsing.parse_line(prefix + " " + PRIMUS.strip())
    assert found is not None
    assert (found.framework, found.iteration, found.rank) == ("megatron", 100, 7)
    assert found.at == 1787400001.482113  # the line's own stamp, not the logger's
    assert found.values["tokens_per_gpu_avg"] == 12747.6


def test_the_rest_of_a_log_gives_nothing() -> None:
    for line in (
        "",
        "Loading checkpoint shards: 100%|██████████| 4/4",
        "> building train, validation, and test datasets ...",
        "NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC",
        "[rank3]: Traceback (most recent call last):",
        CORE_0_19 + " " * text.MAX_LINE,  # too long to be one
    ):
        assert parsing.parse_line(line) is None, line[:60]


@given(st.text(max_size=500))
def test_any_text_gives_figures_or_none_never_an_exception(line: str) -> None:
    found = parsing.parse_line(line)
    assert found is None or found.framework in ("megatron", "torchtitan", "deepspeed", "hf-trainer")


@given(
    st.lists(
        st.sampled_from(
            [
                " iteration ",
                "|",
                "step:",
                "loss:",
                "{'loss':",
                "steps: ",
                "step=",
                "1",
                "/",
                ": ",
                "GB",
                "\x1b[31m",
                "[rank1]:",
                "e+",
                "-",
            ]
        ),
        max_size=40,
    )
)
def test_lines_made_of_the_parsers_own_words_never_raise(words: list[str]) -> None:
    found = parsing.parse_line("".join(words))
    assert found is None or found.iteration is None or found.iteration >= 0
