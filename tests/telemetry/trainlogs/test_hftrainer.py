"""The Hugging Face Trainer's logged dicts: training ones are iterations without a number;
evaluation and summary dicts, and anything that is no literal dict, are not."""

from __future__ import annotations

from lens.telemetry.trainlogs import hftrainer


def test_a_training_dict() -> None:
    line = (
        "{'loss': 2.1234, 'grad_norm': 1.0873012542724609, 'learning_rate': 4.9e-05, 'epoch': 0.05}"
    )
    found = hftrainer.parse(line, 2)
    assert found is not None
    assert (found.framework, found.iteration, found.rank, found.at) == ("hf-trainer", None, 2, None)
    assert found.values == {
        "lm_loss": 2.1234,
        "grad_norm": 1.0873012542724609,
        "learning_rate": 4.9e-05,
        "epoch": 0.05,
    }


def test_after_a_progress_bar_and_with_an_old_tensor_repr() -> None:
    line = " 12%|█▏        | 120/1000 [01:02<07:35,  1.93it/s]{'loss': 1.5, 'epoch': 0.12}"
    found = hftrainer.parse(line)
    assert found is not None and found.values == {"lm_loss": 1.5, "epoch": 0.12}
    # 4.38-era grad norms were tensors: not a literal, so no figures from that line.
    assert hftrainer.parse("{'loss': 1.5, 'grad_norm': tensor(0.5), 'epoch': 0.1}") is None


def test_evaluation_summaries_and_hostile_text_are_no_iteration() -> None:
    for line in (
        "{'eval_loss': 1.9876, 'eval_runtime': 12.3456, 'epoch': 1.0}",
        "{'train_runtime': 1234.5678, 'train_loss': 1.9876, 'epoch': 3.0}",
        "{'loss': __import__('os').system('true')}",
        "{'loss': " + "[" * 500 + "]" * 500 + "}",
        "{'loss': 1.0" + " " * 5000 + "}",
        "{'loss': True}",
    ):
        assert hftrainer.parse(line) is None, line[:60]


def test_numbers_past_a_doubles_range_are_no_figures() -> None:
    huge = "1" * 400  # an integer literal float() cannot take
    assert hftrainer.parse("{'loss': " + huge + "}") is None
    assert hftrainer.parse("{'loss': " + huge + ", 'epoch': [1]}") is None
    assert hftrainer.parse("{'loss': 1e999, 'epoch': 0.5}") is None
    found = hftrainer.parse("{'loss': 1.5, 'grad_norm': 1e999, 'epoch': " + huge + "}")
    assert found is not None and found.values == {"lm_loss": 1.5}


def test_dicts_in_other_python_spellings_read_as_literal_eval_reads_them() -> None:
    found = hftrainer.parse("{'loss': +2, 'epoch': 1., 'grad_norm': -0.5e1, 'learning_rate': .5}")
    assert found is not None
    assert found.values == {"lm_loss": 2.0, "epoch": 1.0, "grad_norm": -5.0, "learning_rate": 0.5}
    found = hftrainer.parse('{"loss": 1.25,"epoch":0.5, "eval_loss": 2}')
    assert found is None  # not the Trainer's "{'loss':" at all
    found = hftrainer.parse("{'loss': 1.25,'epoch':  0.5, 'learning_rate': 1_0}")
    assert found is not None and found.values == {
        "lm_loss": 1.25,
        "epoch": 0.5,
        "learning_rate": 10,
    }
    assert hftrainer.parse("{'loss': 05}") is None  # no Python literal
