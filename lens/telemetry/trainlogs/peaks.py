"""Model FLOPs utilization: a GPU's achieved TFLOP/s over its peak dense BF16 TFLOP/s.

The peaks are those TorchTitan's `get_peak_flops` uses (pytorch/torchtitan
torchtitan/tools/utils.py; ../shared/formats/training-logs.md section 7), matched against the
GPU model names Lens reads ("AMD Instinct MI300X", "NVIDIA H100 80GB HBM3"): the most specific
name first, so "MI325X" is not taken for "MI300X" nor "H100 PCIe" for "H100"."""

from __future__ import annotations

# (what the model name contains, upper case; peak dense BF16 TFLOP/s per GPU)
PEAK_TFLOPS: tuple[tuple[str, float], ...] = (
    ("MI355X", 2500.0),
    ("MI325X", 1300.0),
    ("MI300X", 1300.0),
    ("MI250X", 191.5),  # per GCD: each shows as a GPU
    ("GB300", 2500.0),
    ("GB200", 2500.0),
    ("B300", 2250.0),
    ("B200", 2250.0),
    ("H200", 989.0),
    ("H100 PCIE", 756.0),
    ("H100 NVL", 835.0),
    ("H100", 989.0),
    ("A100", 312.0),
)


def peak_tflops(gpu_model: str) -> float | None:
    """The peak of the GPU model named, None when the table has none."""
    name = gpu_model.upper()
    for part, peak in PEAK_TFLOPS:
        if part in name:
            return peak
    return None


def mfu_percent(tflops_per_gpu: float, gpu_model: str) -> float | None:
    """Achieved over peak, in percent; None for a model without a known peak."""
    peak = peak_tflops(gpu_model)
    if peak is None or tflops_per_gpu < 0:
        return None
    return 100.0 * tflops_per_gpu / peak
