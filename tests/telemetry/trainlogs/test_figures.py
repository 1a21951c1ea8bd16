"""An iteration's stored document: its figures by the original's names, and the iteration."""

from __future__ import annotations

from lens.telemetry.trainlogs.figures import FIGURES, IterationFigures


def test_the_document_stored_names_the_iteration() -> None:
    figures = IterationFigures(framework="megatron", iteration=7, values={"tflops": 400.0})
    assert figures.performance() == {"tflops": 400.0, "current_iteration": 7}
    unnumbered = IterationFigures(framework="hf-trainer", iteration=None, values={"lm_loss": 1.0})
    assert unnumbered.performance() == {"lm_loss": 1.0}


def test_the_originals_names_are_kept() -> None:
    original = {
        "current_iteration",
        "target_iteration",
        "consumed_samples",
        "elapsed_time_per_iteration_ms",
        "learning_rate",
        "global_batch_size",
        "lm_loss",
        "loss_scale",
        "grad_norm",
        "num_zeros",
        "skipped_iterations_number",
        "nan_iterations_number",
        "samples_per_second",
        "tflops",
        "mfu",
        "tokens_per_gpu",
        "mem_usages",
        "mem_free",
        "mem_total",
        "mem_usage_ratio",
        "actual_seqlen",
    }
    assert original <= set(FIGURES) and len(set(FIGURES)) == len(FIGURES)
