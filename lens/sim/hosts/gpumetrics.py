"""The amdgpu `gpu_metrics` binary table, encoded as the kernel lays it out.

Layouts follow drivers/gpu/drm/amd/include/kgd_pp_interface.h (struct gpu_metrics_v1_3,
v1_6 with xcp_stats, v1_8 with amdgpu_xcp_metrics_v1_2), little-endian with natural alignment
and no packing; shared/formats/amdgpu-sysfs.md section 3 lists the offsets this reproduces.
Fields not given are all-ones, which the driver uses for "not available".
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Mapping, Sequence
from typing import Union

NUM_HBM_INSTANCES = 4
NUM_XGMI_LINKS = 8
MAX_GFX_CLKS = 8
MAX_CLKS = 4
NUM_VCN = 4
NUM_JPEG_ENG = 32
NUM_JPEG_ENG_V1 = 40
NUM_XCP = 8
MAX_XCC = 8

_CODES = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q"}

Field = tuple[str, Union[str, "Layout"], int]  # name, type, count


@dataclasses.dataclass(frozen=True)
class Layout:
    """A C struct: fields in order, each a scalar type or a nested struct, with a count."""

    name: str
    fields: tuple[Field, ...]

    def _align_of(self, kind: str | Layout) -> int:
        if isinstance(kind, Layout):
            return max(kind._align_of(k) for _, k, _ in kind.fields)
        return struct.calcsize(_CODES[kind])

    def _size_of(self, kind: str | Layout) -> int:
        return kind.size if isinstance(kind, Layout) else struct.calcsize(_CODES[kind])

    @property
    def offsets(self) -> dict[str, int]:
        offsets, position = {}, 0
        for name, kind, count in self.fields:
            align = self._align_of(kind)
            position = (position + align - 1) // align * align
            offsets[name] = position
            position += self._size_of(kind) * count
        return offsets

    @property
    def size(self) -> int:
        last_name, last_kind, last_count = self.fields[-1]
        end = self.offsets[last_name] + self._size_of(last_kind) * last_count
        align = self._align_of(self)
        return (end + align - 1) // align * align

    def encode(self, values: Mapping[str, object]) -> bytes:
        """The struct's bytes; absent fields (and absent array entries) are all-ones."""
        buffer = bytearray(b"\xff" * self.size)
        for name, kind, count in self.fields:
            offset = self.offsets[name]
            value = values.get(name)
            if value is None:
                continue
            items = (
                list(value)
                if isinstance(value, Sequence) and not isinstance(value, str | bytes)
                else [value]
            )
            for index, item in enumerate(items[:count]):
                if isinstance(kind, Layout):
                    assert isinstance(item, Mapping)
                    encoded = kind.encode(item)
                    start = offset + index * kind.size
                    buffer[start : start + kind.size] = encoded
                else:
                    if item is None:
                        continue
                    size = struct.calcsize(_CODES[kind])
                    if not isinstance(item, int | float):
                        raise TypeError(f"{self.name}.{name}: {item!r} is not a number")
                    number = int(item)
                    struct.pack_into("<" + _CODES[kind], buffer, offset + index * size, number)
        return bytes(buffer)


def _fields(*spec: Field) -> tuple[Field, ...]:
    return tuple(spec)


_HEADER = _fields(
    ("structure_size", "u16", 1), ("format_revision", "u8", 1), ("content_revision", "u8", 1)
)

V1_3 = Layout(
    "gpu_metrics_v1_3",
    _HEADER
    + _fields(
        ("temperature_edge", "u16", 1),
        ("temperature_hotspot", "u16", 1),
        ("temperature_mem", "u16", 1),
        ("temperature_vrgfx", "u16", 1),
        ("temperature_vrsoc", "u16", 1),
        ("temperature_vrmem", "u16", 1),
        ("average_gfx_activity", "u16", 1),
        ("average_umc_activity", "u16", 1),
        ("average_mm_activity", "u16", 1),
        ("average_socket_power", "u16", 1),
        ("energy_accumulator", "u64", 1),
        ("system_clock_counter", "u64", 1),
        ("average_gfxclk_frequency", "u16", 1),
        ("average_socclk_frequency", "u16", 1),
        ("average_uclk_frequency", "u16", 1),
        ("average_vclk0_frequency", "u16", 1),
        ("average_dclk0_frequency", "u16", 1),
        ("average_vclk1_frequency", "u16", 1),
        ("average_dclk1_frequency", "u16", 1),
        ("current_gfxclk", "u16", 1),
        ("current_socclk", "u16", 1),
        ("current_uclk", "u16", 1),
        ("current_vclk0", "u16", 1),
        ("current_dclk0", "u16", 1),
        ("current_vclk1", "u16", 1),
        ("current_dclk1", "u16", 1),
        ("throttle_status", "u32", 1),
        ("current_fan_speed", "u16", 1),
        ("pcie_link_width", "u16", 1),
        ("pcie_link_speed", "u16", 1),
        ("padding", "u16", 1),
        ("gfx_activity_acc", "u32", 1),
        ("mem_activity_acc", "u32", 1),
        ("temperature_hbm", "u16", NUM_HBM_INSTANCES),
        ("firmware_timestamp", "u64", 1),
        ("voltage_soc", "u16", 1),
        ("voltage_gfx", "u16", 1),
        ("voltage_mem", "u16", 1),
        ("padding1", "u16", 1),
        ("indep_throttle_status", "u64", 1),
    ),
)

XCP_METRICS = Layout(
    "amdgpu_xcp_metrics",
    _fields(
        ("gfx_busy_inst", "u32", MAX_XCC),
        ("jpeg_busy", "u16", NUM_JPEG_ENG),
        ("vcn_busy", "u16", NUM_VCN),
        ("gfx_busy_acc", "u64", MAX_XCC),
    ),
)

XCP_METRICS_V1_2 = Layout(
    "amdgpu_xcp_metrics_v1_2",
    _fields(
        ("gfx_busy_inst", "u32", MAX_XCC),
        ("jpeg_busy", "u16", NUM_JPEG_ENG_V1),
        ("vcn_busy", "u16", NUM_VCN),
        ("gfx_busy_acc", "u64", MAX_XCC),
        ("gfx_below_host_limit_ppt_acc", "u64", MAX_XCC),
        ("gfx_below_host_limit_thm_acc", "u64", MAX_XCC),
        ("gfx_low_utilization_acc", "u64", MAX_XCC),
        ("gfx_below_host_limit_total_acc", "u64", MAX_XCC),
    ),
)

_V1_6_BODY = _fields(
    ("temperature_hotspot", "u16", 1),
    ("temperature_mem", "u16", 1),
    ("temperature_vrsoc", "u16", 1),
    ("curr_socket_power", "u16", 1),
    ("average_gfx_activity", "u16", 1),
    ("average_umc_activity", "u16", 1),
)
_ACCUMULATORS = _fields(
    ("energy_accumulator", "u64", 1),
    ("system_clock_counter", "u64", 1),
    ("accumulation_counter", "u32", 1),
    ("prochot_residency_acc", "u32", 1),
    ("ppt_residency_acc", "u32", 1),
    ("socket_thm_residency_acc", "u32", 1),
    ("vr_thm_residency_acc", "u32", 1),
    ("hbm_thm_residency_acc", "u32", 1),
    ("gfxclk_lock_status", "u32", 1),
    ("pcie_link_width", "u16", 1),
    ("pcie_link_speed", "u16", 1),
    ("xgmi_link_width", "u16", 1),
    ("xgmi_link_speed", "u16", 1),
    ("gfx_activity_acc", "u32", 1),
    ("mem_activity_acc", "u32", 1),
    ("pcie_bandwidth_acc", "u64", 1),
    ("pcie_bandwidth_inst", "u64", 1),
    ("pcie_l0_to_recov_count_acc", "u64", 1),
    ("pcie_replay_count_acc", "u64", 1),
    ("pcie_replay_rover_count_acc", "u64", 1),
    ("pcie_nak_sent_count_acc", "u32", 1),
    ("pcie_nak_rcvd_count_acc", "u32", 1),
    ("xgmi_read_data_acc", "u64", NUM_XGMI_LINKS),
    ("xgmi_write_data_acc", "u64", NUM_XGMI_LINKS),
)
_CLOCKS = _fields(
    ("firmware_timestamp", "u64", 1),
    ("current_gfxclk", "u16", MAX_GFX_CLKS),
    ("current_socclk", "u16", MAX_CLKS),
    ("current_vclk0", "u16", MAX_CLKS),
    ("current_dclk0", "u16", MAX_CLKS),
    ("current_uclk", "u16", 1),
    ("num_partition", "u16", 1),
)

V1_6 = Layout(
    "gpu_metrics_v1_6",
    _HEADER
    + _V1_6_BODY
    + _ACCUMULATORS
    + _CLOCKS
    + _fields(("xcp_stats", XCP_METRICS, NUM_XCP), ("pcie_lc_perf_other_end_recovery", "u32", 1)),
)

V1_8 = Layout(
    "gpu_metrics_v1_8",
    _HEADER
    + _V1_6_BODY
    + _fields(("mem_max_bandwidth", "u64", 1))
    + _ACCUMULATORS
    + _fields(("xgmi_link_status", "u16", NUM_XGMI_LINKS), ("padding", "u16", 1))
    + _CLOCKS
    + _fields(
        ("xcp_stats", XCP_METRICS_V1_2, NUM_XCP), ("pcie_lc_perf_other_end_recovery", "u32", 1)
    ),
)

LAYOUTS = {(1, 3): V1_3, (1, 6): V1_6, (1, 8): V1_8}


def encode(revision: tuple[int, int], values: Mapping[str, object]) -> bytes:
    """A complete table of `revision` (format, content) with its header filled in."""
    layout = LAYOUTS[revision]
    header = {
        "structure_size": layout.size,
        "format_revision": revision[0],
        "content_revision": revision[1],
    }
    return layout.encode({**values, **header})
