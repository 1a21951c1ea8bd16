"""The amdgpu `gpu_metrics` binary table: struct layouts, decoding, and encoding for simulators.

Layouts follow drivers/gpu/drm/amd/include/kgd_pp_interface.h (gpu_metrics_v1_3 .. v1_8 and the
amdgpu_xcp_metrics partition blocks), little-endian with natural alignment and no packing;
shared/formats/amdgpu-sysfs.md section 3 lists the offsets reproduced here. A table is decoded
by its header revision *and* its structure_size (v1.6 exists in two sizes); all-ones fields mean
"not available". The v1.9 form is a list of self-describing attributes. amdgpu.py decodes;
lens/sim/hosts encodes with the same layouts.
"""

from __future__ import annotations

import dataclasses
import re
import struct
from collections.abc import Mapping, Sequence

from lens.runtime import errors

CODES = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q"}
ENERGY_JOULES_PER_UNIT = 2.0**-16  # 15.259 µJ


class GpuMetricsError(errors.SourceError, ValueError):
    """The blob is not a gpu_metrics table this decoder knows (a SourceError, as every bad
    input of a device parser; still a ValueError for callers that caught that)."""


@dataclasses.dataclass(frozen=True)
class Layout:
    """A C struct: fields in order, each a scalar type or a nested struct, with a count."""

    name: str
    fields: tuple[tuple[str, str | Layout, int], ...]
    offsets: dict[str, int] = dataclasses.field(init=False, compare=False, repr=False)
    size: int = dataclasses.field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Computed once: decoding a table every second must not redo the layout arithmetic.
        object.__setattr__(self, "offsets", self._offsets())
        object.__setattr__(self, "size", self._size())

    def _align(self, kind: str | Layout) -> int:
        if isinstance(kind, Layout):
            return max(kind._align(k) for _, k, _ in kind.fields)
        return struct.calcsize(CODES[kind])

    def _width(self, kind: str | Layout) -> int:
        return kind.size if isinstance(kind, Layout) else struct.calcsize(CODES[kind])

    def _offsets(self) -> dict[str, int]:
        offsets, position = {}, 0
        for name, kind, count in self.fields:
            align = self._align(kind)
            position = (position + align - 1) // align * align
            offsets[name] = position
            position += self._width(kind) * count
        return offsets

    def _size(self) -> int:
        name, kind, count = self.fields[-1]
        end = self._offsets()[name] + self._width(kind) * count
        align = self._align(self)
        return (end + align - 1) // align * align

    def encode(self, values: Mapping[str, object]) -> bytes:
        """The struct's bytes; absent fields (and absent array entries) are all-ones."""
        buffer = bytearray(b"\xff" * self.size)
        offsets = self.offsets
        for name, kind, count in self.fields:
            value = values.get(name)
            if value is None:
                continue
            items = (
                list(value)
                if isinstance(value, Sequence) and not isinstance(value, str)
                else [value]
            )
            for index, item in enumerate(items[:count]):
                start = offsets[name] + index * self._width(kind)
                if isinstance(kind, Layout):
                    if not isinstance(item, Mapping):
                        raise TypeError(f"{self.name}.{name}: expected a mapping for {kind.name}")
                    buffer[start : start + kind.size] = kind.encode(item)
                elif item is not None:
                    if not isinstance(item, int | float):
                        raise TypeError(f"{self.name}.{name}: {item!r} is not a number")
                    struct.pack_into("<" + CODES[kind], buffer, start, int(item))
        return bytes(buffer)

    def field(self, name: str) -> tuple[int, str | Layout, int] | None:
        """Offset, type and count of field `name`, or None when this layout lacks it."""
        for field_name, kind, count in self.fields:
            if field_name == name:
                return self.offsets[field_name], kind, count
        return None

    def decode(self, blob: bytes, base: int = 0) -> dict[str, object]:
        """Every field (slow: for tests and tools); all-ones become None, arrays tuples."""
        decoded: dict[str, object] = {}
        offsets = self.offsets
        for name, kind, count in self.fields:
            items: list[object] = []
            for index in range(count):
                start = base + offsets[name] + index * self._width(kind)
                if isinstance(kind, Layout):
                    items.append(kind.decode(blob, start))
                else:
                    (number,) = struct.unpack_from("<" + CODES[kind], blob, start)
                    items.append(
                        None if number == (1 << (8 * struct.calcsize(CODES[kind]))) - 1 else number
                    )
            decoded[name] = items[0] if count == 1 else tuple(items)
        return decoded


_FIELD_RE = re.compile(r"(\w+)\s+(\w+)(?:\[(\d+)\])?")


def struct_layout(name: str, body: str, **nested: Layout) -> Layout:
    """A Layout from C declarations such as `u16 temperature_hbm[4];`."""
    fields = []
    for declaration in (d.strip() for d in body.split(";")):
        if not declaration:
            continue
        match = _FIELD_RE.fullmatch(declaration)
        if match is None:
            raise ValueError(f"{name}: cannot read declaration {declaration!r}")
        kind, field, count = match.groups()
        fields.append((field, nested.get(kind, kind), int(count or 1)))
    return Layout(name, tuple(fields))


_HEADER = "u16 structure_size; u8 format_revision; u8 content_revision;"

XCP_METRICS = struct_layout(
    "amdgpu_xcp_metrics",
    "u32 gfx_busy_inst[8]; u16 jpeg_busy[32]; u16 vcn_busy[4]; u64 gfx_busy_acc[8];",
)
XCP_METRICS_V1_1 = struct_layout(
    "amdgpu_xcp_metrics_v1_1",
    "u32 gfx_busy_inst[8]; u16 jpeg_busy[32]; u16 vcn_busy[4]; u64 gfx_busy_acc[8];"
    "u64 gfx_below_host_limit_acc[8];",
)
XCP_METRICS_V1_2 = struct_layout(
    "amdgpu_xcp_metrics_v1_2",
    "u32 gfx_busy_inst[8]; u16 jpeg_busy[40]; u16 vcn_busy[4]; u64 gfx_busy_acc[8];"
    "u64 gfx_below_host_limit_ppt_acc[8]; u64 gfx_below_host_limit_thm_acc[8];"
    "u64 gfx_low_utilization_acc[8]; u64 gfx_below_host_limit_total_acc[8];",
)

V1_3 = struct_layout(
    "gpu_metrics_v1_3",
    _HEADER + "u16 temperature_edge; u16 temperature_hotspot; u16 temperature_mem;"
    "u16 temperature_vrgfx; u16 temperature_vrsoc; u16 temperature_vrmem;"
    "u16 average_gfx_activity; u16 average_umc_activity; u16 average_mm_activity;"
    "u16 average_socket_power; u64 energy_accumulator; u64 system_clock_counter;"
    "u16 average_gfxclk_frequency; u16 average_socclk_frequency; u16 average_uclk_frequency;"
    "u16 average_vclk0_frequency; u16 average_dclk0_frequency; u16 average_vclk1_frequency;"
    "u16 average_dclk1_frequency; u16 current_gfxclk; u16 current_socclk; u16 current_uclk;"
    "u16 current_vclk0; u16 current_dclk0; u16 current_vclk1; u16 current_dclk1;"
    "u32 throttle_status; u16 current_fan_speed; u16 pcie_link_width; u16 pcie_link_speed;"
    "u16 padding; u32 gfx_activity_acc; u32 mem_activity_acc; u16 temperature_hbm[4];"
    "u64 firmware_timestamp; u16 voltage_soc; u16 voltage_gfx; u16 voltage_mem; u16 padding1;"
    "u64 indep_throttle_status;",
)

_V1_4_START = (
    "u16 temperature_hotspot; u16 temperature_mem; u16 temperature_vrsoc; u16 curr_socket_power;"
)
_ACTIVITY = "u16 average_gfx_activity; u16 average_umc_activity;"
_PCIE_XGMI = (
    "u16 pcie_link_width; u16 pcie_link_speed; u16 xgmi_link_width; u16 xgmi_link_speed;"
    "u32 gfx_activity_acc; u32 mem_activity_acc; u64 pcie_bandwidth_acc; u64 pcie_bandwidth_inst;"
    "u64 pcie_l0_to_recov_count_acc; u64 pcie_replay_count_acc; u64 pcie_replay_rover_count_acc;"
)
_NAKS = "u32 pcie_nak_sent_count_acc; u32 pcie_nak_rcvd_count_acc;"
_XGMI_DATA = "u64 xgmi_read_data_acc[8]; u64 xgmi_write_data_acc[8];"
_CLOCKS = (
    "u64 firmware_timestamp; u16 current_gfxclk[8]; u16 current_socclk[4]; u16 current_vclk0[4];"
    "u16 current_dclk0[4]; u16 current_uclk;"
)
# The v1.6+ residency accumulators (how many accumulation periods each throttler was active in)
# and the throttle reason Lens names each by; the reasons of throttle_status's bits in v1.4 and
# v1.5 (SMU 13.0.6's THROTTLER_*_BIT, smu13_driver_if_v13_0_6.h) are the same.
RESIDENCY_FIELDS = (
    ("prochot_residency_acc", "prochot"),
    ("ppt_residency_acc", "power"),
    ("socket_thm_residency_acc", "thermal_socket"),
    ("vr_thm_residency_acc", "thermal_vr"),
    ("hbm_thm_residency_acc", "thermal_hbm"),
)
THROTTLE_STATUS_BITS = ((0, "prochot"), (1, "power"), (2, "thermal_socket"), (3, "thermal_vr"),
                        (4, "thermal_hbm"))  # fmt: skip
_RESIDENCY = (
    "u64 energy_accumulator; u64 system_clock_counter; u32 accumulation_counter;"
    "u32 prochot_residency_acc; u32 ppt_residency_acc; u32 socket_thm_residency_acc;"
    "u32 vr_thm_residency_acc; u32 hbm_thm_residency_acc;"
)

V1_4 = struct_layout(
    "gpu_metrics_v1_4",
    _HEADER + _V1_4_START + _ACTIVITY + "u16 vcn_activity[4]; u64 energy_accumulator;"
    "u64 system_clock_counter; u32 throttle_status; u32 gfxclk_lock_status;"
    + _PCIE_XGMI
    + _XGMI_DATA
    + _CLOCKS
    + "u16 padding;",
)
V1_5 = struct_layout(
    "gpu_metrics_v1_5",
    _HEADER + _V1_4_START + _ACTIVITY + "u16 vcn_activity[4]; u16 jpeg_activity[32];"
    "u64 energy_accumulator; u64 system_clock_counter; u32 throttle_status; u32 gfxclk_lock_status;"
    + _PCIE_XGMI
    + _NAKS
    + _XGMI_DATA
    + _CLOCKS
    + "u16 padding;",
)
V1_6_EARLY = struct_layout(
    "gpu_metrics_v1_6_early",
    _HEADER
    + _V1_4_START
    + _ACTIVITY
    + "u16 vcn_activity[4]; u16 jpeg_activity[32];"
    + _RESIDENCY
    + "u32 throttle_status; u32 gfxclk_lock_status;"
    + _PCIE_XGMI
    + _NAKS
    + _XGMI_DATA
    + _CLOCKS
    + "u16 padding;",
)
V1_6 = struct_layout(
    "gpu_metrics_v1_6",
    _HEADER
    + _V1_4_START
    + _ACTIVITY
    + _RESIDENCY
    + "u32 gfxclk_lock_status;"
    + _PCIE_XGMI
    + _NAKS
    + _XGMI_DATA
    + _CLOCKS
    + "u16 num_partition; xcp xcp_stats[8]; u32 pcie_lc_perf_other_end_recovery;",
    xcp=XCP_METRICS,
)
# v1.7 and v1.8 share their fields; only the per-partition block (xcp) grew.
_V1_7_FIELDS = (
    _HEADER
    + _V1_4_START
    + _ACTIVITY
    + "u64 mem_max_bandwidth;"
    + _RESIDENCY
    + "u32 gfxclk_lock_status;"
    + _PCIE_XGMI
    + _NAKS
    + _XGMI_DATA
    + "u16 xgmi_link_status[8]; u16 padding;"
    + _CLOCKS
    + "u16 num_partition; xcp xcp_stats[8]; u32 pcie_lc_perf_other_end_recovery;"
)
V1_7 = struct_layout("gpu_metrics_v1_7", _V1_7_FIELDS, xcp=XCP_METRICS_V1_1)
V1_8 = struct_layout("gpu_metrics_v1_8", _V1_7_FIELDS, xcp=XCP_METRICS_V1_2)

# Several layouts share a revision; the structure size tells them apart.
LAYOUTS: dict[tuple[int, int], tuple[Layout, ...]] = {
    (1, 3): (V1_3,),
    (1, 4): (V1_4,),
    (1, 5): (V1_5,),
    (1, 6): (V1_6_EARLY, V1_6),
    (1, 7): (V1_7,),
    (1, 8): (V1_8,),
}


def encode(revision: tuple[int, int], values: Mapping[str, object]) -> bytes:
    """A complete table of `revision` (format, content) in its newest layout, header filled."""
    layout = LAYOUTS[revision][-1]
    header = {
        "structure_size": layout.size,
        "format_revision": revision[0],
        "content_revision": revision[1],
    }
    return layout.encode({**values, **header})
