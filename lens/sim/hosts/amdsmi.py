"""What the amd-smi stand-in prints: `static`, `metric`, `list` and `version` with --json.

Shapes from shared/formats/amd-smi.md: numbers as {"value", "unit"} objects (ROCm 6.1+),
"N/A" where unavailable, partitions as separate GPUs whose secondary entries are mostly "N/A"
(ROCm/amdsmi#134), a bare list before amd-smi 26 and {"gpu_data": [...]} since, indent 4.
"""

from __future__ import annotations

import json
from typing import Any

JsonObject = dict[str, Any]

NA = "N/A"
MB = 1024 * 1024


def unit(value: float | int | None, name: str) -> Any:
    return NA if value is None else {"value": value, "unit": name}


def entries(state: JsonObject) -> list[tuple[JsonObject, int]]:
    """One (gpu, partition index) per logical GPU, as amd-smi enumerates partitions."""
    found = []
    for gpu in state["gpus"]:
        found.append((gpu, 0))
        found.extend((gpu, part["index"]) for part in gpu["partitions"])
    return found


def _asic(gpu: JsonObject, partition: int) -> JsonObject:
    model = gpu["model"]
    return {
        "market_name": model["market_name"],
        "vendor_id": "0x1002",
        "vendor_name": "Advanced Micro Devices Inc. [AMD/ATI]",
        "subvendor_id": "0x1002",
        "device_id": model["device_id"],
        "subsystem_id": model["device_id"],
        "rev_id": "0x00",
        "asic_serial": f"0x{gpu['unique_id'].upper()}",
        "oam_id": gpu["index"] if partition == 0 else NA,
        "num_compute_units": model["compute_units"] // (len(gpu["partitions"]) + 1),
        "target_graphics_version": model["gfx_version"],
    }


def _bus(gpu: JsonObject) -> JsonObject:
    model = gpu["model"]
    return {
        "bdf": gpu["bdf"],
        "max_pcie_width": model["pcie_width"],
        "max_pcie_speed": unit(model["pcie_speed_gts"], "GT/s"),
        "pcie_interface_version": "Gen 5" if model["pcie_speed_gts"] >= 32 else "Gen 4",
        "slot_type": "OAM",
    }


def _limit(model: JsonObject, primary: bool) -> JsonObject:
    edge = model["has_edge_sensor"]
    return {
        "max_power": unit(int(model["max_power_w"]), "W") if primary else NA,
        "min_power": unit(0, "W") if primary else NA,
        "socket_power": unit(int(model["max_power_w"]), "W") if primary else NA,
        "slowdown_hotspot_temperature": unit(100, "C"),
        "shutdown_hotspot_temperature": unit(110, "C"),
        "slowdown_vram_temperature": unit(95, "C"),
        "shutdown_vram_temperature": unit(105, "C"),
        "slowdown_edge_temperature": unit(90, "C") if edge else NA,
        "shutdown_edge_temperature": unit(100, "C") if edge else NA,
    }


def _static(gpu: JsonObject, partition: int, index: int, state: JsonObject) -> JsonObject:
    model = gpu["model"]
    shares = len(gpu["partitions"]) + 1
    return {
        "gpu": index,
        "asic": _asic(gpu, partition),
        "bus": _bus(gpu),
        "vbios": {
            "name": "AMD MI300X_HW_SRIOV_CVS_1VF",
            "build_date": "2024/05/15 10:26",
            "part_number": "113-M3000100-102",
            "version": "022.040.003.043.000001",
        },
        "limit": _limit(model, partition == 0),
        "driver": {"name": "amdgpu", "version": state["driver_version"]},
        "board": {
            "model_number": "102-G30211-00",
            "product_serial": gpu["serial"],
            "fru_id": NA,
            "product_name": f"{model['market_name']} OAM",
            "manufacturer_name": "AMD",
        },
        "partition": {
            "compute_partition": state["compute_partition"],
            "memory_partition": state["memory_partition"],
            "partition_id": partition,
        },
        "numa": {"node": gpu["numa_node"], "affinity": gpu["numa_node"]},
        "vram": {
            "type": model["vram_type"],
            "vendor": "HYNIX",
            "size": unit(model["vram_bytes"] // MB // shares, "MB"),
            "bit_width": 8192,
            "max_bandwidth": NA,
        },
    }


def _clock(current: float, low: int, high: int) -> JsonObject:
    return {
        "clk": unit(int(current), "MHz"),
        "min_clk": unit(low, "MHz"),
        "max_clk": unit(high, "MHz"),
        "clk_locked": "UNLOCKED",
        "deep_sleep": "DISABLED",
    }


def _pcie(model: JsonObject, reading: JsonObject) -> JsonObject:
    return {
        "width": model["pcie_width"],
        "speed": unit(model["pcie_speed_gts"], "GT/s"),
        "bandwidth": unit(int(reading["utilization"] * 100), "Mb/s"),
        "replay_count": reading["pcie_replay"],
        "l0_to_recovery_count": 0,
        "replay_roll_over_count": 0,
        "nak_sent_count": 0,
        "nak_received_count": 0,
    }


def _metric(gpu: JsonObject, partition: int, index: int) -> JsonObject:
    reading, model = gpu["reading"], gpu["model"]
    usage = {
        "gfx_activity": unit(reading["utilization"], "%"),
        "umc_activity": NA,
        "mm_activity": NA,
    }
    if partition:
        # Secondary partitions answer most socket-level fields with N/A (ROCm/amdsmi#134).
        return {"gpu": index, "usage": usage, "power": NA, "temperature": NA}
    usage.update(
        umc_activity=unit(reading["memory_activity"], "%"),
        vcn_activity=[NA] * 4,
        jpeg_activity=[NA] * 32,
    )
    edge = reading["temp_edge_c"]
    return {
        "gpu": index,
        "usage": usage,
        "power": {
            "socket_power": unit(int(reading["power_w"]), "W"),
            "gfx_voltage": NA,
            "soc_voltage": NA,
            "mem_voltage": NA,
            "throttle_status": "UNTHROTTLED",
            "power_management": "ENABLED",
        },
        "clock": {
            "gfx_0": _clock(reading["sclk_mhz"], 500, model["peak_sclk_mhz"]),
            "mem_0": _clock(reading["mclk_mhz"], 900, model["mclk_mhz"]),
        },
        "temperature": {
            "edge": unit(int(edge), "C") if edge is not None else NA,
            "hotspot": unit(int(reading["temp_junction_c"]), "C"),
            "mem": unit(int(reading["temp_mem_c"]), "C"),
        },
        "pcie": _pcie(model, reading),
        "ecc": {
            "total_correctable_count": reading["ecc_correctable"],
            "total_uncorrectable_count": reading["ecc_uncorrectable"],
            "total_deferred_count": 0,
        },
        "energy": {"total_energy_consumption": unit(round(reading["energy_j"] / 1e6, 3), "MJ")},
        "mem_usage": {
            "total_vram": unit(model["vram_bytes"] // MB, "MB"),
            "used_vram": unit(reading["vram_used_bytes"] // MB, "MB"),
            "free_vram": unit((model["vram_bytes"] - reading["vram_used_bytes"]) // MB, "MB"),
        },
    }


def _amd_uuid(gpu: JsonObject) -> str:
    """amd-smi's UUID: the device id and the unique id in a UUID's shape (amdsmi uuid helper)."""
    unique, device = gpu["unique_id"], gpu["model"]["device_id"][2:]
    return f"{unique[:2]}ff{device}-0000-1000-80{unique[2:4]}-{unique[4:16]}"


def _wrap(state: JsonObject, items: list[JsonObject]) -> Any:
    return {"gpu_data": items} if state["amd_smi_layout"] == "gpu_data" else items


def run(argv: list[str], state: JsonObject) -> tuple[str, int]:
    if "--json" not in argv:
        return "amd-smi stand-in prints --json output only\n", 2
    command = argv[0] if argv else ""
    logical = entries(state)
    if command == "static":
        document: Any = _wrap(state, [_static(g, p, i, state) for i, (g, p) in enumerate(logical)])
    elif command == "metric":
        document = _wrap(state, [_metric(g, p, i) for i, (g, p) in enumerate(logical)])
    elif command == "list":
        document = [
            {
                "gpu": i,
                "bdf": g["bdf"],
                "uuid": _amd_uuid(g),
                "kfd_id": g["kfd_gpu_id"] + p * 7,
                "node_id": 2 + i,
                "partition_id": p,
            }
            for i, (g, p) in enumerate(logical)
        ]
    elif command == "version":
        document = [
            {
                "tool": "AMDSMI Tool",
                "version": "26.0.0+sim",
                "amdsmi_library_version": "26.0.0",
                "rocm_version": "7.0.0",
                "driver_version": state["driver_version"],
            }
        ]
    else:
        return json.dumps({"error": f"Invalid command: {command}", "code": -1}) + "\n", 255
    return json.dumps(document, indent=4) + "\n", 0
