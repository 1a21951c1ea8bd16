"""GPU and NIC models the simulator knows, with the identities and limits real boards report.

PCI ids and gfx targets follow shared/formats/amdgpu-sysfs.md and amd-smi.md (MI300X 0x74a1,
gfx942); power limits and VRAM sizes are the vendors' published board figures.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

Vendor = Literal["amd", "nvidia"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuModel:
    name: str
    market_name: str
    vendor: Vendor
    device_id: str
    vram_bytes: int
    idle_power_w: float
    max_power_w: float
    peak_sclk_mhz: int
    mclk_mhz: int
    pcie_speed_gts: float = 32.0
    pcie_width: int = 16
    gfx_version: str = ""
    compute_units: int = 0
    xcc_count: int = 1
    metrics_revision: tuple[int, int] = (1, 8)
    has_edge_sensor: bool = False
    power_file: str = "power1_input"
    compute_partitions: tuple[str, ...] = ("SPX",)
    vram_type: str = "HBM3"


_GIB = 1024**3

MODELS: dict[str, GpuModel] = {
    "MI300X": GpuModel(
        name="MI300X",
        market_name="AMD Instinct MI300X",
        vendor="amd",
        device_id="0x74a1",
        vram_bytes=192 * _GIB,
        idle_power_w=140,
        max_power_w=750,
        peak_sclk_mhz=2100,
        mclk_mhz=1300,
        gfx_version="gfx942",
        compute_units=304,
        xcc_count=8,
        metrics_revision=(1, 8),
        compute_partitions=("SPX", "DPX", "QPX", "CPX"),
    ),
    "MI325X": GpuModel(
        name="MI325X",
        market_name="AMD Instinct MI325X",
        vendor="amd",
        device_id="0x74a5",
        vram_bytes=256 * _GIB,
        idle_power_w=150,
        max_power_w=1000,
        peak_sclk_mhz=2100,
        mclk_mhz=1300,
        gfx_version="gfx942",
        compute_units=304,
        xcc_count=8,
        metrics_revision=(1, 8),
        compute_partitions=("SPX", "DPX", "QPX", "CPX"),
        vram_type="HBM3E",
    ),
    "MI250X": GpuModel(
        name="MI250X",
        market_name="AMD Instinct MI250X",
        vendor="amd",
        device_id="0x740c",
        vram_bytes=64 * _GIB,
        idle_power_w=90,
        max_power_w=560,
        peak_sclk_mhz=1700,
        mclk_mhz=1600,
        pcie_speed_gts=16.0,
        gfx_version="gfx90a",
        compute_units=110,
        metrics_revision=(1, 3),
        has_edge_sensor=True,
        power_file="power1_average",
        vram_type="HBM2e",
    ),
    "H100": GpuModel(
        name="H100",
        market_name="NVIDIA H100 80GB HBM3",
        vendor="nvidia",
        device_id="0x2330",
        vram_bytes=80 * _GIB,
        idle_power_w=70,
        max_power_w=700,
        peak_sclk_mhz=1980,
        mclk_mhz=2619,
    ),
    "A100": GpuModel(
        name="A100",
        market_name="NVIDIA A100-SXM4-80GB",
        vendor="nvidia",
        device_id="0x20b2",
        vram_bytes=80 * _GIB,
        idle_power_w=60,
        max_power_w=400,
        peak_sclk_mhz=1410,
        mclk_mhz=1593,
        pcie_speed_gts=16.0,
    ),
}

# Where the GPUs of an 8-GPU server sit (one per PCIe switch), and which NUMA node owns them.
GPU_BUSES = (
    0x05,
    0x26,
    0x46,
    0x65,
    0x85,
    0xA6,
    0xC6,
    0xE5,
    0x0C,
    0x2C,
    0x4C,
    0x6C,
    0x8C,
    0xAC,
    0xCC,
    0xEC,
)
NIC_BUSES = (
    0x07,
    0x28,
    0x48,
    0x67,
    0x87,
    0xA8,
    0xC8,
    0xE7,
    0x0E,
    0x2E,
    0x4E,
    0x6E,
    0x8E,
    0xAE,
    0xCE,
    0xEE,
)


def bdf(bus: int, *, domain: int = 0, function: int = 0) -> str:
    """The sysfs spelling of a PCI address: 0000:c6:00.0."""
    return f"{domain:04x}:{bus:02x}:00.{function}"
