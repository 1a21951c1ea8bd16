"""Parsing amd-smi and rocm-smi JSON into GpuStatic facts, tolerant of every shape they print.

Shapes from shared/formats/amd-smi.md: warnings or banners before the JSON, a bare list
(amd-smi < 26) or {"gpu_data": [...]} (and cpu_data/nic_data beside it), numbers as
{"value", "unit"} objects or "N/A", partitions as several entries of one PCI address (the
first is kept); rocm-smi's one-line {"cardN": {...}} with string values and "system" section.
statics.py runs the tools and calls these; the functions only parse.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from lens.devices.gpu import GpuStatic
from lens.runtime import errors

NA = "N/A"


def _document(text: str, tool: str) -> Any:
    """The JSON value in a tool's output, skipping whatever it printed before it."""
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    if not starts:
        raise errors.SourceError(f"{tool} printed no JSON")
    try:
        return json.loads(text[min(starts) :])
    except json.JSONDecodeError as exc:
        raise errors.SourceError(
            f"{tool} printed malformed JSON: {exc.msg} at character {exc.pos}"
        ) from exc


def _value(item: Any) -> Any:
    """A leaf: {"value": v, "unit": u} -> v; "N/A" -> None; anything else as is."""
    if isinstance(item, dict) and "value" in item:
        item = item["value"]
    if item == NA or item == "":
        return None
    return item


def _text(item: Any) -> str | None:
    value = _value(item)
    return None if value is None else str(value)


def _integer(item: Any) -> int | None:
    value = _value(item)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value).split()[0], 0) if value is not None else None
    except ValueError:
        return None


def _section(entry: dict[str, Any], name: str) -> dict[str, Any]:
    section = entry.get(name)
    return section if isinstance(section, dict) else {}


def _gpu_entries(document: Any) -> list[dict[str, Any]]:
    if isinstance(document, dict) and "error" in document and "gpu_data" not in document:
        raise errors.SourceError(
            f"amd-smi reported: {document['error']} (code {document.get('code')})"
        )
    entries = document.get("gpu_data", []) if isinstance(document, dict) else document
    if not isinstance(entries, list):
        raise errors.SourceError("amd-smi JSON holds no list of GPUs")
    return [e for e in entries if isinstance(e, dict)]


def _vram_bytes(vram: dict[str, Any]) -> int | None:
    size = vram.get("size")
    megabytes = _integer(size)
    if megabytes is None:
        return None
    unit = size.get("unit", "MB") if isinstance(size, dict) else "MB"
    return megabytes * {"MB": 1024**2, "GB": 1024**3, "B": 1}.get(unit, 1024**2)


def parse_amd_smi_static(text: str) -> dict[str, GpuStatic]:
    """`amd-smi static --json` -> facts by PCI address (lowercase, 4-digit domain)."""
    facts: dict[str, GpuStatic] = {}
    for entry in _gpu_entries(_document(text, "amd-smi")):
        bus, asic = _section(entry, "bus"), _section(entry, "asic")
        bdf = (_text(bus.get("bdf")) or "").lower()
        if not bdf:
            continue
        if bdf in facts:
            # A partition repeats its GPU's address; the first entry speaks for the GPU.
            counted = facts[bdf].partition_count or 1
            facts[bdf] = dataclasses.replace(facts[bdf], partition_count=counted + 1)
            continue
        board, partition = _section(entry, "board"), _section(entry, "partition")
        numa, vram = _section(entry, "numa"), _section(entry, "vram")
        facts[bdf] = GpuStatic(
            pci_bus_id=bdf,
            market_name=_text(asic.get("market_name")),
            serial=_text(board.get("product_serial")) or _text(asic.get("asic_serial")),
            vbios=_text(_section(entry, "vbios").get("version")),
            driver_version=_text(_section(entry, "driver").get("version")),
            device_id=_text(asic.get("device_id")),
            gfx_version=_text(asic.get("target_graphics_version")),
            compute_partition=_text(partition.get("compute_partition")),
            memory_partition=_text(partition.get("memory_partition")),
            numa_node=_integer(numa.get("node")),
            numa_affinity=_integer(numa.get("affinity")),
            vram_type=_text(vram.get("type")),
            vram_bytes=_vram_bytes(vram),
            oam_id=_integer(asic.get("oam_id")),
            source="amd-smi",
        )
    if not facts:
        raise errors.SourceError("amd-smi listed no GPUs")
    return facts


def parse_rocm_smi_driver(text: str) -> str:
    """`rocm-smi --showdriverversion --json` -> the driver version."""
    document = _document(text, "rocm-smi")
    version = _text(
        _section(document if isinstance(document, dict) else {}, "system").get("Driver version")
    )
    if version is None:
        raise errors.SourceError("rocm-smi printed no driver version")
    return version


def parse_rocm_smi_cards(text: str) -> dict[str, GpuStatic]:
    """`rocm-smi --showbus --showserial --showproductname --json` -> facts by PCI address."""
    document = _document(text, "rocm-smi")
    if not isinstance(document, dict):
        raise errors.SourceError("rocm-smi JSON is not an object of cards")
    facts: dict[str, GpuStatic] = {}
    for name, card in document.items():
        if not name.startswith("card") or not isinstance(card, dict):
            continue
        bdf = (_text(card.get("PCI Bus")) or "").lower()
        if bdf and bdf not in facts:
            facts[bdf] = GpuStatic(
                pci_bus_id=bdf,
                market_name=_text(card.get("Card Series")) or _text(card.get("Card series")),
                serial=_text(card.get("Serial Number")),
                source="rocm-smi",
            )
    return facts
