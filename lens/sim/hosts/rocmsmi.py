"""What the rocm-smi stand-in prints with --json: one line, string values, keys with units.

Key names from rocm_smi.py as recorded in shared/formats/amd-smi.md section 9: `cardN` per
device (rocm-smi's index), sensors it cannot read left out, `system` for the driver version.
"""

from __future__ import annotations

import json
from typing import Any

from lens.sim.hosts.amdsmi import entries

JsonObject = dict[str, Any]


def _card(argv: list[str], gpu: JsonObject, partition: int) -> JsonObject:
    reading, model = gpu["reading"], gpu["model"]
    card: JsonObject = {}
    if "-t" in argv and not partition:
        if reading["temp_edge_c"] is not None:
            card["Temperature (Sensor edge) (C)"] = f"{reading['temp_edge_c']:.1f}"
        card["Temperature (Sensor junction) (C)"] = f"{reading['temp_junction_c']:.1f}"
        card["Temperature (Sensor memory) (C)"] = f"{reading['temp_mem_c']:.1f}"
    if "-P" in argv and not partition:
        average = model["power_file"] == "power1_average"
        key = (
            "Average Graphics Package Power (W)"
            if average
            else "Current Socket Graphics Package Power (W)"
        )
        card[key] = f"{reading['power_w']:.1f}"
    if "-u" in argv:
        card["GPU use (%)"] = str(int(reading["utilization"]))
        card["GFX Activity"] = str(int(reading["energy_j"]))
    if "--showmemuse" in argv:
        card["GPU Memory Allocated (VRAM%)"] = str(
            int(100 * reading["vram_used_bytes"] / model["vram_bytes"])
        )
        card["GPU Memory Read/Write Activity (%)"] = str(int(reading["memory_activity"]))
        card["Memory Activity"] = "N/A"
        card["Avg. Memory Bandwidth"] = "0"
    if "-b" in argv:
        bandwidth = f"{reading['utilization'] * 12.5:.3f}"
        card["Estimated maximum PCIe bandwidth over the last second (MB/s)"] = bandwidth
    if "--showbus" in argv:
        card["PCI Bus"] = gpu["bdf"].upper()
    if "--showproductname" in argv:
        card["Card Series"] = model["market_name"]
        card["Card Model"] = model["device_id"]
        card["Card Vendor"] = "Advanced Micro Devices, Inc. [AMD/ATI]"
        card["GFX Version"] = model["gfx_version"]
    if "--showserial" in argv:
        card["Serial Number"] = gpu["serial"]
    return card


def run(argv: list[str], state: JsonObject) -> tuple[str, int]:
    if "--json" not in argv:
        return "rocm-smi stand-in prints --json output only\n", 2
    if "--showdriverversion" in argv:
        return json.dumps({"system": {"Driver version": state["driver_version"]}}) + "\n", 0
    cards = {}
    for index, (gpu, partition) in enumerate(entries(state)):
        card = _card(argv, gpu, partition)
        if card:
            cards[f"card{index}"] = card
    if not cards:
        return "", 0
    return json.dumps(cards) + "\n", 0
