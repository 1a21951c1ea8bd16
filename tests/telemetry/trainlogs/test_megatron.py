"""Megatron-LM's iteration line in each of its versions and AMD Primus's rewrites of it, read
field by field (../shared/formats/training-logs.md sections 1 and 2)."""

from __future__ import annotations

import pytest

from lens.telemetry.trainlogs import megatron

CORE_0_19 = (
    " [2026-08-22 12:00:01.482113] iteration      100/   10000 | consumed samples:         6400 |"
    " elapsed time per iteration (ms): 5123.4 | throughput per GPU (TFLOP/s/GPU): 487.2 |"
    " energy per GPU (J/iter/GPU): 3201.5 | power per GPU (W/GPU): 624.9 |"
    " learning rate: 1.499250E-05 | global batch size:    64 | lm loss: 7.214836E+00 |"
    " mtp_1 loss: 7.301200E+00 | loss scale: 1.0 | grad norm: 2.143 |"
    " number of skipped iterations:   0 | number of nan iterations:   0 |"
)
# core 0.9 (Mixtral): seconds only, a MoE loss, num zeros.
CORE_0_9 = (
    " [2024-04-06 03:02:12] iteration       71/     100 | consumed samples:         9088 |"
    " elapsed time per iteration (ms): 5361.6 | throughput per GPU (TFLOP/s/GPU): 243.6 |"
    " learning rate: 1.420000E-05 | global batch size:   128 | lm loss: 1.818812E+00 |"
    " load_balancing_loss: 1.013377E+00 | loss scale: 1.0 | grad norm: 1.300 |"
    " num zeros: 0.0 | number of skipped iterations:   0 | number of nan iterations:   0 |"
)
V2 = (
    " iteration     2000/  500000 | consumed samples:       256000 |"
    " elapsed time per iteration (ms): 812.3 | learning rate: 1.500E-05 |"
    " global batch size:   128 | lm loss: 3.412500E+00 | loss scale: 65536.0 |"
    " number of skipped iterations:   0 | number of nan iterations:   0 |"
)
PRIMUS = (
    " [2026-08-22 12:00:01.482113] iteration      100/   10000 | consumed samples:         6400 |"
    " elapsed time per iteration (ms): 5123.4/5140.9 |"
    " compute per GPU (TFLOP/s/GPU): 487.2 (avg 485.9)  |"
    " tokens/s/GPU inst/harmonic mean: 12791.3/12747.6 | learning rate: 1.499250E-05 |"
    " global batch size:    64 | lm loss: 7.214836E+00 | loss scale: 1.0 | grad norm: 2.143 |"
    " number of skipped iterations:   0 | number of nan iterations:   0 |"
    " hip mem usage/free/total/usage_ratio: 151.27GB/40.71GB/191.98GB/78.79%"
)
PRIMUS_ROCM = PRIMUS.replace(
    "hip mem usage/free/total/usage_ratio: 151.27GB/40.71GB/191.98GB/78.79%",
    "hip mem usage/free/total/usage_ratio: 151.27GB/40.71GB/191.98GB/78.79%"
    " | rocm mem usage/free/total/usage_ratio: 152.00GB/39.98GB/191.98GB/79.17%"
    " | rank-7 rocm max mem usage/usage_ratio: 160.50GB/83.60%",
)
PRIMUS_LEGACY = (
    " iteration      100/   10000 | consumed samples:         6400 |"
    " elapsed time per iteration (ms): 5123.4/5140.9 |"
    " hip mem usage/free/total/usage_ratio: 151.27GB/ 40.71GB/191.98GB/78.79% |"
    " throughput per GPU (TFLOP/s/GPU): 487.2/485.9 |"
    " tokens per GPU (tokens/s/GPU): 12791.3/12747.6 | learning rate: 1.499250E-05 |"
    " global batch size:    64 | lm loss: 7.214836E+00 | loss scale: 1.0 |"
    " grad norm: 2.143 | number of skipped iterations:   0 | number of nan iterations:   0 |"
)
PRIMUS_OLDEST = (
    " iteration       10/     500 | consumed samples:          640 |"
    " elapsed time per iteration (ms): 901.0/920.5 | mem usages: 0.7812 |"
    " throughput per GPU (TFLOP/s/GPU): 301.2/299.8 | learning rate: 3.000000E-06 |"
    " global batch size:    64 | lm loss: 1.045000E+01 | loss scale: 1.0 |"
    " grad norm: 12.500 | number of skipped iterations:   0 | number of nan iterations:   0 |"
)


def test_megatron_core_0_19() -> None:
    found = megatron.parse(CORE_0_19)
    assert found is not None
    assert (found.framework, found.iteration) == ("megatron", 100)
    assert found.at == 1787400001.482113  # 2026-08-22T12:00:01.482113Z: the fraction as written
    assert found.values == {
        "target_iteration": 10000,
        "consumed_samples": 6400,
        "elapsed_time_per_iteration_ms": 5123.4,
        "tflops": 487.2,
        "energy_per_gpu_joules": 3201.5,
        "power_per_gpu_watts": 624.9,
        "learning_rate": 1.49925e-05,
        "global_batch_size": 64,
        "lm_loss": 7.214836,
        "mtp_1 loss": 7.3012,
        "loss_scale": 1.0,
        "grad_norm": 2.143,
        "skipped_iterations_number": 0,
        "nan_iterations_number": 0,
    }
    assert found.performance()["current_iteration"] == 100


def test_megatron_core_0_9_with_a_moe_loss() -> None:
    found = megatron.parse(CORE_0_9)
    assert found is not None and found.iteration == 71
    assert found.at == 1712372532.0  # 2024-04-06T03:02:12Z
    assert found.values["load_balancing_loss"] == 1.013377
    assert (found.values["lm_loss"], found.values["num_zeros"]) == (1.818812, 0.0)


def test_megatron_v2_has_no_timestamp_and_three_digit_learning_rates() -> None:
    found = megatron.parse(V2)
    assert found is not None and (found.iteration, found.at) == (2000, None)
    assert found.values["learning_rate"] == 1.5e-05
    assert found.values["elapsed_time_per_iteration_ms"] == 812.3
    assert "tflops" not in found.values  # no --log-throughput


def test_primus_current_gives_instant_and_average_figures_and_memory() -> None:
    found = megatron.parse(PRIMUS)
    assert found is not None and found.iteration == 100
    values = found.values
    assert (
        values["elapsed_time_per_iteration_ms"],
        values["elapsed_time_per_iteration_avg_ms"],
    ) == (
        5123.4,
        5140.9,
    )
    assert (values["tflops"], values["tflops_avg"]) == (487.2, 485.9)
    assert (values["tokens_per_gpu"], values["tokens_per_gpu_avg"]) == (12791.3, 12747.6)
    assert (values["mem_usages"], values["mem_free"], values["mem_total"]) == (
        151.27,
        40.71,
        191.98,
    )
    assert values["mem_usage_ratio"] == 78.79


def test_primus_rocm_memory_and_a_ranks_maximum() -> None:
    found = megatron.parse(PRIMUS_ROCM)
    assert found is not None
    assert (found.values["mem_usages"], found.values["mem_usage_ratio"]) == (152.0, 79.17)
    assert found.values["mem_max_usage"] == 160.5


@pytest.mark.parametrize("line", [PRIMUS_LEGACY, PRIMUS_OLDEST])
def test_legacy_primus_segments_in_their_own_order(line: str) -> None:
    found = megatron.parse(line)
    assert found is not None and found.at is None
    assert found.values["tflops"] in (487.2, 301.2)
    assert found.values["tflops_avg"] in (485.9, 299.8)
    assert found.values["mem_usages"] in (151.27, 0.7812)


def test_lines_that_are_no_iteration_line() -> None:
    for line in (
        "[after dataloaders are built] datetime: 2026-08-22 11:58:02.123456 ",
        "training ...",
        " iteration | of nothing",
        "Job throughput: 364.8 TFLOP/s/GPU\tCumulative throughput: 387.0 TFLOP/s/GPU",
        "[Rank 0] (after 1 iterations) memory (MB) | allocated: 61234.56 | max allocated: 1",
    ):
        assert megatron.parse(line) is None, line


def test_a_field_it_cannot_read_is_left_out_and_the_rest_kept() -> None:
    found = megatron.parse(CORE_0_19.replace("grad norm: 2.143", "grad norm: nan"))
    assert found is not None and "grad_norm" not in found.values
    assert found.values["lm_loss"] == 7.214836
