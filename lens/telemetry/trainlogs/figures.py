"""What one training log line tells of an iteration: `IterationFigures`, whose `values` use the
names the original stored in training_performance.performance (REFERENCE.md 10.3), kept for
compatibility, and new ones for what it lost."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

# The figures a line may give, by the name stored. Units are those the frameworks print:
# milliseconds, TFLOP/s per GPU, tokens/s per GPU, memory in GiB (Primus labels it "GB" but
# divides by 1024^3), ratios in percent.
FIGURES = (
    "current_iteration",
    "target_iteration",
    "consumed_samples",
    "skipped_samples",
    "elapsed_time_per_iteration_ms",
    "elapsed_time_per_iteration_avg_ms",
    "tflops",
    "tflops_avg",
    "tokens_per_gpu",
    "tokens_per_gpu_avg",
    "samples_per_second",
    "energy_per_gpu_joules",
    "power_per_gpu_watts",
    "learning_rate",
    "decoupled_learning_rate",
    "global_batch_size",
    "lm_loss",
    "loss_scale",
    "grad_norm",
    "num_zeros",
    "params_norm",
    "skipped_iterations_number",
    "nan_iterations_number",
    "mem_usages",
    "mem_free",
    "mem_total",
    "mem_usage_ratio",
    "mem_max_usage",
    "actual_seqlen",
    "epoch",
    "mfu",
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class IterationFigures:
    """One iteration line: which framework printed it, the iteration (None where the framework
    prints none: the Hugging Face Trainer, whose intake numbers them in order), the time the
    line itself carries (Unix seconds, None if none), the rank it came from when a prefix says
    so, and its figures by name (FIGURES), losses other than the LM loss under their own names
    ("mtp_1 loss", "load_balancing_loss")."""

    framework: str
    iteration: int | None
    at: float | None = None
    rank: int | None = None
    values: Mapping[str, float] = dataclasses.field(default_factory=dict)

    def performance(self) -> dict[str, float]:
        """The document stored in training_performance.performance."""
        document = dict(self.values)
        if self.iteration is not None:
            document["current_iteration"] = self.iteration
        return document
