"""What Lens takes from a gpu_metrics table: `parse_gpu_metrics(blob)`, in SI-ish units.

gpumetrics.py holds the struct layouts; this module picks the layout by revision and size,
converts units (energy in 15.259 µJ steps to joules, PCIe speed in 0.1 GT/s to GT/s) and
reads the v1.9 attribute-encoded form (AMDGPU_METRICS_ENC_ATTR: bits 24-31 unit, 20-23 type,
10-19 attribute id, 0-9 count; shared/formats/amdgpu-sysfs.md 3.5). amdgpu.py calls it.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

from lens.devices import gpumetrics
from lens.devices.gpumetrics import GpuMetricsError

__all__ = ["GpuMetrics", "GpuMetricsError", "parse_gpu_metrics"]

_ATTR_TYPES = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "Q", 7: "q"}
# enum amdgpu_metrics_attr_id, the ones Lens reads.
_ATTR_NAMES = {
    0: "temperature_hotspot",
    1: "temperature_mem",
    2: "temperature_vrsoc",
    3: "curr_socket_power",
    4: "average_gfx_activity",
    5: "average_umc_activity",
    6: "mem_max_bandwidth",
    7: "energy_accumulator",
    8: "system_clock_counter",
    9: "accumulation_counter",
}


_WANTED = (
    "temperature_edge",
    "temperature_hotspot",
    "temperature_mem",
    "average_gfx_activity",
    "average_umc_activity",
    "curr_socket_power",
    "average_socket_power",
    "energy_accumulator",
    "current_gfxclk",
    "current_uclk",
    "pcie_link_width",
    "pcie_link_speed",
    "pcie_replay_count_acc",
    "throttle_status",
    "system_clock_counter",
    "num_partition",
    "accumulation_counter",
    *(field for field, _reason in gpumetrics.RESIDENCY_FIELDS),
)


@dataclasses.dataclass(frozen=True, slots=True)
class _Reader:
    """The fields Lens reads from one layout, precompiled: a cycle decodes ~20 values, not 1,000."""

    fields: tuple[
        tuple[str, int, struct.Struct, int, int], ...
    ]  # name, offset, struct, count, all-ones
    partitions: (
        tuple[int, int, struct.Struct, int] | None
    )  # xcp_stats offset, stride, gfx_busy_inst

    @classmethod
    def compile(cls, layout: gpumetrics.Layout) -> _Reader:
        fields = []
        for name in _WANTED:
            found = layout.field(name)
            if found is None or isinstance(found[1], gpumetrics.Layout):
                continue
            offset, kind, count = found
            assert isinstance(kind, str)
            code = gpumetrics.CODES[kind]
            fields.append(
                (
                    name,
                    offset,
                    struct.Struct(f"<{count}{code}"),
                    count,
                    (1 << (8 * struct.calcsize(code))) - 1,
                )
            )
        partitions = None
        stats = layout.field("xcp_stats")
        if stats is not None and isinstance(stats[1], gpumetrics.Layout):
            busy = stats[1].field("gfx_busy_inst")
            assert busy is not None
            partitions = (
                stats[0] + busy[0],
                stats[1].size,
                struct.Struct(f"<{busy[2]}I"),
                stats[2],
            )
        return cls(tuple(fields), partitions)

    def read(self, blob: bytes) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name, offset, packed, count, all_ones in self.fields:
            raw = packed.unpack_from(blob, offset)
            kept = tuple(None if v == all_ones else v for v in raw)
            values[name] = kept[0] if count == 1 else kept
        if self.partitions is not None:
            offset, stride, packed, most = self.partitions
            count = min(values.get("num_partition") or 0, most)
            values["xcp_busy"] = tuple(
                packed.unpack_from(blob, offset + i * stride) for i in range(count)
            )
        return values


_READERS = {
    layout.size: _Reader.compile(layout)
    for layouts in gpumetrics.LAYOUTS.values()
    for layout in layouts
}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuMetrics:
    revision: tuple[int, int]
    temperature_edge_c: float | None = None
    temperature_hotspot_c: float | None = None
    temperature_mem_c: float | None = None
    gfx_activity_percent: float | None = None
    umc_activity_percent: float | None = None
    socket_power_w: float | None = None
    energy_j: float | None = None
    gfxclk_mhz: float | None = None
    uclk_mhz: float | None = None
    pcie_width: int | None = None
    pcie_speed_gts: float | None = None
    pcie_replays: int | None = None
    throttle_status: int | None = None
    system_clock_ns: int | None = None
    partition_busy_percent: tuple[float, ...] = ()
    accumulation_counter: int | None = None
    # (reason, accumulations it throttled in) of v1.6+, whose throttle_status is gone.
    throttle_residency: tuple[tuple[str, int], ...] = ()


def parse_gpu_metrics(blob: bytes) -> GpuMetrics:
    """Decode a gpu_metrics file's bytes, or raise GpuMetricsError saying why not."""
    if len(blob) < 4:
        raise GpuMetricsError(f"gpu_metrics too short ({len(blob)} bytes)")
    size, major, minor = struct.unpack_from("<HBB", blob, 0)
    if major == 1 and minor >= 9:
        return _from_fields((major, minor), _attributes(blob))
    candidates = gpumetrics.LAYOUTS.get((major, minor), ())
    layout = next((c for c in candidates if c.size == size), None)
    if layout is None:
        raise GpuMetricsError(f"unsupported gpu_metrics revision {major}.{minor} of {size} bytes")
    if len(blob) < layout.size:
        raise GpuMetricsError(
            f"gpu_metrics {major}.{minor} truncated: {len(blob)} of {layout.size} bytes"
        )
    return _from_fields((major, minor), _READERS[layout.size].read(blob))


def _attributes(blob: bytes) -> dict[str, Any]:
    if len(blob) < 8:
        raise GpuMetricsError("gpu_metrics attribute table too short")
    (count,) = struct.unpack_from("<i", blob, 4)
    position, fields = 8, {}
    for _ in range(count):
        if position + 8 > len(blob):
            raise GpuMetricsError("gpu_metrics attribute table truncated")
        (encoding,) = struct.unpack_from("<Q", blob, position)
        position += 8
        code = _ATTR_TYPES.get((encoding >> 20) & 0xF)
        instances, attr = encoding & 0x3FF, (encoding >> 10) & 0x3FF
        if code is None:
            raise GpuMetricsError(f"gpu_metrics attribute of unknown type {(encoding >> 20) & 0xF}")
        width = struct.calcsize(code)
        if position + width * instances > len(blob):
            raise GpuMetricsError("gpu_metrics attribute values truncated")
        values = struct.unpack_from(f"<{instances}{code}", blob, position)
        position += width * instances
        name = _ATTR_NAMES.get(attr)
        if name is not None:
            all_ones = (1 << (8 * width)) - 1
            kept = [None if v == all_ones else v for v in values]
            fields[name] = kept[0] if instances == 1 else tuple(kept)
    return fields


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _first(value: Any) -> float | None:
    """A per-instance array's representative: the highest valid instance (clocks per XCC)."""
    if isinstance(value, tuple):
        valid = [v for v in value if v is not None]
        return float(max(valid)) if valid else None
    return _number(value)


def _partitions(fields: dict[str, Any]) -> tuple[float, ...]:
    busy = []
    for partition in fields.get("xcp_busy", ()):
        values = [v for v in partition if v != 0xFFFFFFFF]
        busy.append(sum(values) / len(values) if values else 0.0)
    return tuple(busy)


def _from_fields(revision: tuple[int, int], fields: dict[str, Any]) -> GpuMetrics:
    energy = fields.get("energy_accumulator")
    speed = fields.get("pcie_link_speed")
    power = fields.get("curr_socket_power", fields.get("average_socket_power"))
    return GpuMetrics(
        revision=revision,
        temperature_edge_c=_number(fields.get("temperature_edge")),
        temperature_hotspot_c=_number(fields.get("temperature_hotspot")),
        temperature_mem_c=_number(fields.get("temperature_mem")),
        gfx_activity_percent=_number(fields.get("average_gfx_activity")),
        umc_activity_percent=_number(fields.get("average_umc_activity")),
        socket_power_w=_number(power),
        energy_j=None if energy is None else energy * gpumetrics.ENERGY_JOULES_PER_UNIT,
        gfxclk_mhz=_first(fields.get("current_gfxclk")),
        uclk_mhz=_first(fields.get("current_uclk")),
        pcie_width=fields.get("pcie_link_width"),
        pcie_speed_gts=None if speed is None else speed / 10,
        pcie_replays=fields.get("pcie_replay_count_acc"),
        throttle_status=fields.get("throttle_status"),
        system_clock_ns=fields.get("system_clock_counter"),
        partition_busy_percent=_partitions(fields),
        accumulation_counter=fields.get("accumulation_counter"),
        throttle_residency=tuple(
            (reason, value)
            for field, reason in gpumetrics.RESIDENCY_FIELDS
            if (value := fields.get(field)) is not None
        ),
    )
