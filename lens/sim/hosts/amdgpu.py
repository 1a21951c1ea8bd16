"""amdgpu sysfs of one simulated GPU: the PCI device directory, hwmon, RAS and gpu_metrics.

File names, formats and units follow the kernel as recorded in shared/formats/amdgpu-sysfs.md
(amdgpu_pm.c DOC blocks and hwmon units: temperatures in millidegrees, power in microwatts,
clocks in hertz; pp_dpm_* with "Mhz"); RAS counts follow amdgpu_ras.c ("ue: N / ce: N / de: N").
tree.py calls write_static once and write_readings on every update.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lens.devices import gpumetrics
from lens.sim.hosts import files
from lens.sim.hosts.state import GpuIdentity, GpuReading

PCI_ROOT = Path("sys/devices/pci0000:00")

Write = Callable[[Path, str | bytes], None]


def pci_dir(root: Path, gpu: GpuIdentity) -> Path:
    return root / PCI_ROOT / gpu.bdf


def hwmon_dir(root: Path, gpu: GpuIdentity) -> Path:
    return pci_dir(root, gpu) / "hwmon" / f"hwmon{gpu.hwmon}"


def write_static(
    root: Path, gpu: GpuIdentity, *, compute_partition: str, memory_partition: str
) -> None:
    device = pci_dir(root, gpu)
    model = gpu.model
    pci_id = f"1002:{model.device_id[2:].upper()}"
    static = {
        "vendor": "0x1002",
        "device": model.device_id,
        "subsystem_vendor": "0x1002",
        "subsystem_device": model.device_id,
        "revision": "0x00",
        "class": "0x120000",
        "numa_node": str(gpu.numa_node),
        "current_link_speed": f"{model.pcie_speed_gts:.1f} GT/s PCIe",
        "max_link_speed": f"{model.pcie_speed_gts:.1f} GT/s PCIe",
        "current_link_width": str(model.pcie_width),
        "max_link_width": str(model.pcie_width),
        "uevent": f"DRIVER=amdgpu\nPCI_CLASS=120000\nPCI_ID={pci_id}\nPCI_SUBSYS_ID={pci_id}\n"
        f"PCI_SLOT_NAME={gpu.bdf}\nMODALIAS=pci:v00001002d0000{model.device_id[2:].upper()}sv00001002\n",
        "unique_id": gpu.unique_id,
        "serial_number": gpu.serial,
        "product_name": f"{model.market_name} OAM",
        "product_number": "102-G30211-00",
        "manufacturer": "AMD",
        "board_info": "type : oam",
        "vbios_version": "022.040.003.043.000001",
        "mem_info_vram_total": str(model.vram_bytes),
        "mem_info_vis_vram_total": str(model.vram_bytes),
        "mem_info_gtt_total": str(512 * 1024**3),
        "mem_info_vram_vendor": "hynix",
        "power_dpm_state": "performance",
        "power_dpm_force_performance_level": "auto",
    }
    if len(model.compute_partitions) > 1:
        static["current_compute_partition"] = compute_partition
        static["available_compute_partition"] = ", ".join(model.compute_partitions)
        static["current_memory_partition"] = memory_partition
    for name, value in static.items():
        files.write(device / name, f"{value}\n")
    files.link(device / "driver", root / "sys/bus/pci/drivers/amdgpu")
    files.link(root / "sys/bus/pci/devices" / gpu.bdf, device)
    files.link(root / "sys/module/amdgpu/drivers/pci:amdgpu" / gpu.bdf, device)
    _write_hwmon_static(root, gpu)


def _write_hwmon_static(root: Path, gpu: GpuIdentity) -> None:
    hwmon = hwmon_dir(root, gpu)
    model = gpu.model
    labels = {
        "temp2_label": "junction",
        "temp3_label": "mem",
        "freq1_label": "sclk",
        "freq2_label": "mclk",
    }
    if model.has_edge_sensor:
        labels["temp1_label"] = "edge"
        labels["temp1_crit"] = "100000"
        labels["in0_label"] = "vddgfx"
    limits = {
        "name": "amdgpu",
        "power1_label": "PPT",
        "power1_cap": str(int(model.max_power_w * 1e6)),
        "power1_cap_max": str(int(model.max_power_w * 1e6)),
        "power1_cap_min": "0",
        "power1_cap_default": str(int(model.max_power_w * 1e6)),
        "temp2_crit": "110000",
        "temp2_emergency": "115000",
        "temp3_crit": "100000",
        "temp3_emergency": "105000",
    }
    for name, value in {**labels, **limits}.items():
        files.write(hwmon / name, f"{value}\n")
    files.link(root / "sys/class/hwmon" / f"hwmon{gpu.hwmon}", hwmon)


def _dpm_levels(levels: list[int], current: float) -> str:
    nearest = min(range(len(levels)), key=lambda i: abs(levels[i] - current))
    lines = [f"{i}: {mhz}Mhz{' *' if i == nearest else ''}" for i, mhz in enumerate(levels)]
    return "S: 19Mhz\n" + "\n".join(lines) + "\n"


def write_readings(
    root: Path,
    gpu: GpuIdentity,
    reading: GpuReading,
    *,
    now: float,
    num_partition: int,
    write: Write = files.write,
) -> None:
    """The GPU's readings, each file through `write` (tree.py may skip those unchanged)."""
    device = pci_dir(root, gpu)
    model = gpu.model
    dynamic = {
        "gpu_busy_percent": str(int(reading.utilization)),
        "mem_busy_percent": str(int(reading.memory_activity)),
        "mem_info_vram_used": str(reading.vram_used_bytes),
        "mem_info_vis_vram_used": str(reading.vram_used_bytes),
        "mem_info_gtt_used": str(64 * 1024**2),
        "pcie_replay_count": str(reading.pcie_replay),
        "pcie_bw": f"{int(reading.utilization * 1000)} {int(reading.utilization * 800)} 256",
        "pp_dpm_sclk": _dpm_levels([500, 1000, 1500, model.peak_sclk_mhz], reading.sclk_mhz).rstrip(
            "\n"
        ),
        "pp_dpm_mclk": _dpm_levels([900, model.mclk_mhz], reading.mclk_mhz).rstrip("\n"),
    }
    for name, value in dynamic.items():
        write(device / name, f"{value}\n")
    for block in ("umc", "gfx"):
        count = reading.ecc_correctable if block == "umc" else 0
        uncorrectable = reading.ecc_uncorrectable if block == "umc" else 0
        write(device / "ras" / f"{block}_err_count", f"ue: {uncorrectable}\nce: {count}\nde: 0\n")
    pages = "".join(
        f"0x{0x1000 + n:08x} : 0x00001000 : {status}\n"
        for n, status in enumerate(reading.bad_pages)
    )
    write(device / "ras" / "gpu_vram_bad_pages", pages)
    _write_hwmon_readings(root, gpu, reading, write)
    write(device / "gpu_metrics", _metrics(gpu, reading, now=now, num_partition=num_partition))


def _write_hwmon_readings(root: Path, gpu: GpuIdentity, reading: GpuReading, write: Write) -> None:
    hwmon = hwmon_dir(root, gpu)
    values = {
        "temp2_input": int(reading.temp_junction_c * 1000),
        "temp3_input": int(reading.temp_mem_c * 1000),
        gpu.model.power_file: int(reading.power_w * 1e6),
        "freq1_input": int(reading.sclk_mhz * 1e6),
        "freq2_input": int(reading.mclk_mhz * 1e6),
    }
    if reading.temp_edge_c is not None:
        values["temp1_input"] = int(reading.temp_edge_c * 1000)
        values["in0_input"] = 850
    for name, value in values.items():
        write(hwmon / name, f"{value}\n")


_RESIDENCY_FIELD = {reason: field for field, reason in gpumetrics.RESIDENCY_FIELDS}


def _metrics(gpu: GpuIdentity, reading: GpuReading, *, now: float, num_partition: int) -> bytes:
    model = gpu.model
    energy_units = int(reading.energy_j * 65536)  # 15.259 µJ = 2^-16 J per unit
    common: dict[str, object] = {
        "temperature_hotspot": int(reading.temp_junction_c),
        "temperature_mem": int(reading.temp_mem_c),
        "average_gfx_activity": int(reading.utilization),
        "average_umc_activity": int(reading.memory_activity),
        "energy_accumulator": energy_units,
        "system_clock_counter": int(now * 1e9),
        "pcie_link_width": model.pcie_width,
        "pcie_link_speed": int(model.pcie_speed_gts * 10),
        "firmware_timestamp": int(now * 1e8),
    }
    if model.metrics_revision == (1, 3):
        values_v13: dict[str, object] = {
            **common,
            "temperature_edge": int(reading.temp_edge_c or 0),
            "average_socket_power": int(reading.power_w),
            "average_gfxclk_frequency": int(reading.sclk_mhz),
            "current_gfxclk": int(reading.sclk_mhz),
            "current_uclk": int(reading.mclk_mhz),
            "throttle_status": 0,
        }
        return gpumetrics.encode((1, 3), values_v13)
    xcc_per_partition = max(1, model.xcc_count // max(1, num_partition))
    partition = {
        "gfx_busy_inst": [int(reading.utilization)] * xcc_per_partition,
        "gfx_busy_acc": [int(reading.energy_j)] * xcc_per_partition,
    }
    values: dict[str, object] = {
        **common,
        "curr_socket_power": int(reading.power_w),
        "xgmi_link_width": 16,
        "xgmi_link_speed": 32,
        "current_gfxclk": [int(reading.sclk_mhz)] * model.xcc_count,
        "current_uclk": int(reading.mclk_mhz),
        "num_partition": num_partition,
        "xcp_stats": [partition] * num_partition,
        "accumulation_counter": int(now),
        **{_RESIDENCY_FIELD[name]: seconds for name, seconds in reading.throttle_residency},
    }
    return gpumetrics.encode(model.metrics_revision, values)
