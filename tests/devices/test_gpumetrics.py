"""gpu_metrics layouts match the offsets shared/formats/amdgpu-sysfs.md computed with gcc."""

from __future__ import annotations

import struct

import pytest

from lens.devices import gpumetrics


@pytest.mark.parametrize(
    ("layout", "size", "offsets"),
    [
        (
            gpumetrics.V1_3,
            120,
            {"energy_accumulator": 24, "temperature_hbm": 88, "indep_throttle_status": 112},
        ),
        (
            gpumetrics.V1_4,
            288,
            {"xgmi_read_data_acc": 104, "firmware_timestamp": 232, "current_uclk": 280},
        ),
        (
            gpumetrics.V1_5,
            360,
            {"pcie_nak_sent_count_acc": 168, "firmware_timestamp": 304, "current_uclk": 352},
        ),
        (
            gpumetrics.V1_6_EARLY,
            384,
            {"accumulation_counter": 104, "throttle_status": 128, "current_uclk": 376},
        ),
        (
            gpumetrics.V1_7,
            2208,
            {"xgmi_link_status": 264, "xcp_stats": 344, "pcie_lc_perf_other_end_recovery": 2200},
        ),
        (gpumetrics.XCP_METRICS_V1_1, 232, {"gfx_below_host_limit_acc": 168}),
        (gpumetrics.XCP_METRICS, 168, {"jpeg_busy": 32, "vcn_busy": 96, "gfx_busy_acc": 104}),
        (
            gpumetrics.XCP_METRICS_V1_2,
            440,
            {"vcn_busy": 112, "gfx_below_host_limit_total_acc": 376},
        ),
        (
            gpumetrics.V1_6,
            1664,
            {
                "pcie_bandwidth_acc": 80,
                "num_partition": 306,
                "xcp_stats": 312,
                "pcie_lc_perf_other_end_recovery": 1656,
            },
        ),
        (
            gpumetrics.V1_8,
            3872,
            {
                "mem_max_bandwidth": 16,
                "xgmi_link_status": 264,
                "firmware_timestamp": 288,
                "xcp_stats": 344,
                "pcie_lc_perf_other_end_recovery": 3864,
            },
        ),
    ],
)
def test_sizes_and_offsets(layout: gpumetrics.Layout, size: int, offsets: dict[str, int]) -> None:
    assert layout.size == size
    for name, offset in offsets.items():
        assert layout.offsets[name] == offset, name


def test_encode_fills_the_header_and_leaves_the_rest_all_ones() -> None:
    blob = gpumetrics.encode(
        (1, 6), {"temperature_hotspot": 55, "xcp_stats": [{"gfx_busy_inst": [7, 8]}]}
    )
    assert struct.unpack_from("<HBB", blob, 0) == (1664, 1, 6)
    assert struct.unpack_from("<H", blob, 4)[0] == 55
    assert struct.unpack_from("<H", blob, 6)[0] == 0xFFFF
    assert struct.unpack_from("<II", blob, 312) == (7, 8)
    assert struct.unpack_from("<I", blob, 312 + 8)[0] == 0xFFFFFFFF
    with pytest.raises(TypeError, match="not a number"):
        gpumetrics.encode((1, 3), {"temperature_edge": "hot"})
