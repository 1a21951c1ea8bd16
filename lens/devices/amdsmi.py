"""Parsing amd-smi and rocm-smi JSON into GpuStatic facts, tolerant of every shape they print.

Shapes from shared/formats/amd-smi.md: warnings or banners before the JSON, a bare list
(amd-smi < 26) or {"gpu_data": [...]} (and cpu_data/nic_data beside it), numbers as
{"value", "unit"} objects or "N/A", partitions as several entries of one PCI address (the
first is kept); rocm-smi's one-line {"cardN": {...}} with string values and "system" section.
statics.py runs the tools and calls these; the functions only parse.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lens.devices import tooljson
from lens.devices.gpu import GpuStatic
from lens.runtime import errors

NA = "N/A"
# Size units amd-smi prints (MB today), upper-cased; amd-smi's "KB" and "MB" are binary ones.
_BYTES_PER = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}
_BYTES_PER.update(KIB=1024, MIB=1024**2, GIB=1024**3)


def _document(text: str, tool: str) -> Any:
    """The JSON value in a tool's output, skipping whatever it printed before it."""
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    if not starts:
        raise errors.SourceError(f"{tool} printed no JSON")
    return tooljson.document(text[min(starts) :], tool)


def _value(item: Any) -> Any:
    """A leaf: {"value": v, "unit": u} -> v; "N/A" -> None; anything else as is."""
    if isinstance(item, dict) and "value" in item:
        item = item["value"]
    if isinstance(item, str) and item.strip() in (NA, ""):
        return None
    return item


def _text(item: Any) -> str | None:
    return tooljson.text(_value(item))


def _integer(item: Any) -> int | None:
    """A count or id (NUMA node, OAM id, size): never negative."""
    return tooljson.integer(_value(item), lowest=0)


def _section(entry: dict[str, Any], name: str) -> dict[str, Any]:
    return tooljson.mapping(entry.get(name))


def _gpu_entries(document: Any) -> list[dict[str, Any]]:
    if isinstance(document, dict) and "error" in document and "gpu_data" not in document:
        error, code = _text(document["error"]), _text(document.get("code"))
        raise errors.SourceError(f"amd-smi reported: {error} (code {code})")
    entries = document.get("gpu_data", []) if isinstance(document, dict) else document
    if not isinstance(entries, list):
        raise errors.SourceError("amd-smi JSON holds no list of GPUs")
    return [e for e in entries if isinstance(e, dict)]


def _vram_bytes(vram: dict[str, Any]) -> int | None:
    """The VRAM size in bytes: MB unless the size says its unit; unknown for a unit that is
    no size unit (a list, "GT/s") or a size that is no count."""
    size = vram.get("size")
    count = _integer(size)
    unit = size.get("unit", "MB") if isinstance(size, dict) else "MB"
    per = _BYTES_PER.get(unit.upper()) if isinstance(unit, str) else None
    if count is None or per is None:
        return None
    return tooljson.integer(count * per)


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
