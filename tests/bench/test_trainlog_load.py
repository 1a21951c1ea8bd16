"""The training-log corpus is what the parsers meet in a cluster's logs: each iteration line of
each framework gives that framework's figures, every other line none; the measure counts them."""

from __future__ import annotations

from bench import trainlog_load
from lens.telemetry.trainlogs import parsing

FRAMEWORK_OF = {
    "megatron": "megatron",
    "primus": "megatron",
    "torchtitan": "torchtitan",
    "deepspeed": "deepspeed",
    "hf-trainer": "hf-trainer",
}


def test_iteration_lines_give_their_frameworks_figures_and_the_rest_nothing() -> None:
    corpus = trainlog_load.build_corpus(3000, seed=3)
    kinds = {kind for kind, _ in corpus}
    assert set(FRAMEWORK_OF) | {"timers", "nccl", "warning", "traceback", "tqdm"} <= kinds
    for kind, line in corpus:
        found = parsing.parse_line(line)
        if kind in FRAMEWORK_OF:
            assert found is not None and found.framework == FRAMEWORK_OF[kind], line
            assert found.values, line
        else:
            assert found is None, line


def test_the_corpus_mixes_prefixes_and_colours() -> None:
    lines = [line for _, line in trainlog_load.build_corpus(3000, seed=3)]
    assert any(line.startswith("[default") for line in lines)
    assert any(line.startswith("[rank0]:") for line in lines)
    assert any("][rank-" in line for line in lines)
    assert any("\x1b[" in line for line in lines)
    assert any("\r" in line for line in lines)


def test_the_measure_counts_every_line_once_and_per_kind() -> None:
    corpus = trainlog_load.build_corpus(500, seed=4)
    figures = trainlog_load.measure(corpus, repeat=1)
    assert figures.lines == len(corpus) == sum(k.lines for k in figures.kinds)
    iteration_kinds = sum(k.lines for k in figures.kinds if k.kind in FRAMEWORK_OF)
    assert figures.iteration_lines == iteration_kinds
    assert figures.lines_per_second > 0 and all(k.lines_per_second > 0 for k in figures.kinds)
    assert figures.as_dict()["lines"] == len(corpus)
