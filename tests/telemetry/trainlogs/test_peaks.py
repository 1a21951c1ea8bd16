"""Model FLOPs utilization from the peaks of the GPU models Lens reads."""

from __future__ import annotations

import pytest

from lens.telemetry.trainlogs import peaks


@pytest.mark.parametrize(
    ("model", "peak"),
    [
        ("AMD Instinct MI300X", 1300.0),
        ("AMD Instinct MI325X", 1300.0),
        ("AMD Instinct MI355X", 2500.0),
        ("NVIDIA H100 80GB HBM3", 989.0),
        ("NVIDIA H100 PCIe", 756.0),
        ("NVIDIA H100 NVL", 835.0),
        ("NVIDIA GB200", 2500.0),
        ("NVIDIA B200", 2250.0),
        ("NVIDIA A100-SXM4-80GB", 312.0),
    ],
)
def test_each_model_gets_its_own_peak(model: str, peak: float) -> None:
    assert peaks.peak_tflops(model) == peak


def test_mfu_is_achieved_over_peak_in_percent() -> None:
    assert peaks.mfu_percent(487.5, "AMD Instinct MI300X") == 37.5
    assert peaks.mfu_percent(487.5, "Radeon Pro W7900") is None
    assert peaks.mfu_percent(-1, "AMD Instinct MI300X") is None
