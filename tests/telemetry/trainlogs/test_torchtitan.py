"""TorchTitan's step line, coloured or not, in its current and older layouts."""

from __future__ import annotations

from lens.telemetry.trainlogs import text, torchtitan

RED, GREEN, ORANGE, TURQUOISE = (
    "\033[31m",
    "\033[32m",
    "\033[38;2;180;60;0m",
    "\033[38;2;54;234;195m",
)
BLUE, CYAN, MAGENTA, RESET = "\033[34m", "\033[36m", "\033[35m", "\033[39m"
COLOURED = (
    f"[titan] 2026-08-22 12:00:01,482 - root - INFO - {RED}step: 50  {GREEN}loss:  3.41250  "
    f"{ORANGE}grad_norm:  0.8731  {TURQUOISE}memory: 61.22GiB(32.01%)  {BLUE}tps: 7,842  "
    f"{CYAN}tflops: 1,451.37  {MAGENTA}mfu: 34.72%{RESET}"
)
OLD = (
    "[titan] 2025-01-10 08:15:00,007 - root - INFO - step: 10  loss:  9.1234  "
    "memory: 40.50GiB(21.17%)  tps: 6,001  mfu: N/A"
)


def test_the_current_line_through_its_colours() -> None:
    cleaned, rank = text.clean(COLOURED)
    found = torchtitan.parse(cleaned, rank)
    assert found is not None
    assert (found.framework, found.iteration, found.rank) == ("torchtitan", 50, None)
    assert found.at == 1787400001.482
    assert found.values == {
        "lm_loss": 3.4125,
        "grad_norm": 0.8731,
        "mem_usages": 61.22,
        "mem_usage_ratio": 32.01,
        "tokens_per_gpu": 7842,
        "tflops": 1451.37,
        "mfu": 34.72,
    }


def test_an_older_line_without_tflops_or_grad_norm_and_mfu_unknown() -> None:
    found = torchtitan.parse(OLD)
    assert found is not None and found.iteration == 10
    assert found.values == {
        "lm_loss": 9.1234,
        "mem_usages": 40.5,
        "mem_usage_ratio": 21.17,
        "tokens_per_gpu": 6001,
    }


def test_validation_and_banners_are_no_iteration() -> None:
    for line in (
        "[titan] 2026-08-22 12:00:01,482 - root - INFO - validate step: 50  loss: 3.4000  "
        "memory: 61.22GiB(32.01%)  tps: 7,842",
        "[titan] 2026-08-22 12:00:01,482 - root - INFO - Training starts at step 1",
    ):
        assert torchtitan.parse(line) is None
