from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.devices import gpumetrics
from lens.devices.metricstable import GpuMetricsError, parse_gpu_metrics
from lens.runtime import errors


def test_a_v1_3_table_in_si_units() -> None:
    blob = gpumetrics.encode(
        (1, 3),
        {
            "temperature_edge": 41,
            "temperature_hotspot": 55,
            "temperature_mem": 48,
            "average_gfx_activity": 87,
            "average_socket_power": 412,
            "energy_accumulator": 65536 * 1000,
            "current_gfxclk": 1700,
            "current_uclk": 1600,
            "pcie_link_width": 16,
            "pcie_link_speed": 160,
            "throttle_status": 0,
        },
    )
    metrics = parse_gpu_metrics(blob)
    assert metrics.revision == (1, 3)
    assert (
        metrics.temperature_edge_c,
        metrics.temperature_hotspot_c,
        metrics.temperature_mem_c,
    ) == (41, 55, 48)
    assert metrics.socket_power_w == 412 and metrics.energy_j == pytest.approx(1000)
    assert (metrics.gfxclk_mhz, metrics.uclk_mhz) == (1700, 1600)
    assert (metrics.pcie_width, metrics.pcie_speed_gts) == (16, 16.0)
    assert metrics.umc_activity_percent is None, "all-ones means not available"


@pytest.mark.parametrize("revision", [(1, 4), (1, 5), (1, 6), (1, 7), (1, 8)])
def test_newer_tables_with_partitions(revision: tuple[int, int]) -> None:
    values: dict[str, object] = {
        "temperature_hotspot": 60,
        "curr_socket_power": 650,
        "average_gfx_activity": 90,
        "current_gfxclk": [2100, 2000, None, None],
        "pcie_replay_count_acc": 3,
    }
    if revision >= (1, 6):
        values["num_partition"] = 2
        values["xcp_stats"] = [{"gfx_busy_inst": [80, 100]}, {"gfx_busy_inst": [10, 30, 50]}]
    metrics = parse_gpu_metrics(gpumetrics.encode(revision, values))
    assert metrics.socket_power_w == 650 and metrics.temperature_hotspot_c == 60
    assert metrics.gfxclk_mhz == 2100, "the highest XCC clock"
    assert metrics.pcie_replays == 3
    assert metrics.temperature_edge_c is None
    assert metrics.partition_busy_percent == ((90.0, 30.0) if revision >= (1, 6) else ())


def test_the_early_v1_6_is_told_apart_by_its_size() -> None:
    blob = gpumetrics.V1_6_EARLY.encode(
        {"structure_size": 384, "format_revision": 1, "content_revision": 6, "throttle_status": 5}
    )
    metrics = parse_gpu_metrics(blob)
    assert metrics.throttle_status == 5 and metrics.partition_busy_percent == ()


def _attribute(attr: int, code: int, values: list[int]) -> bytes:
    encoding = (code << 20) | (attr << 10) | len(values)
    fmt = {2: "H", 6: "Q"}[code]
    return struct.pack("<Q", encoding) + struct.pack(f"<{len(values)}{fmt}", *values)


def test_the_v1_9_attribute_table() -> None:
    records = [
        _attribute(0, 2, [57]),
        _attribute(3, 2, [700]),
        _attribute(7, 6, [65536 * 10]),
        _attribute(99, 2, [1, 2]),
    ]
    blob = struct.pack("<HBBi", 0, 1, 9, len(records)) + b"".join(records)
    metrics = parse_gpu_metrics(blob)
    assert (metrics.revision, metrics.temperature_hotspot_c, metrics.socket_power_w) == (
        (1, 9),
        57,
        700,
    )
    assert metrics.energy_j == pytest.approx(10)


@pytest.mark.parametrize(
    ("blob", "problem"),
    [
        (b"\x01", "too short"),
        (
            struct.pack("<HBB", 100, 1, 3) + b"\0" * 96,
            "unsupported gpu_metrics revision 1.3 of 100 bytes",
        ),
        (struct.pack("<HBB", 120, 1, 3) + b"\0" * 10, "truncated"),
        (struct.pack("<HBB", 0, 2, 1), "unsupported gpu_metrics revision 2.1"),
        (struct.pack("<HBBi", 0, 1, 9, 1) + struct.pack("<Q", (2 << 20) | 5), "truncated"),
        (
            struct.pack("<HBBi", 0, 1, 9, 1) + struct.pack("<Q", (9 << 20) | 1) + b"\0" * 8,
            "unknown type",
        ),
    ],
)
def test_bad_tables_are_refused_with_a_reason(blob: bytes, problem: str) -> None:
    with pytest.raises(GpuMetricsError, match=problem):
        parse_gpu_metrics(blob)


def test_a_table_no_decoder_knows_is_a_lens_error() -> None:
    # A device parser's bad input is a SourceError like any other (GpuMetricsError was a bare
    # ValueError, outside the Lens error tree).
    with pytest.raises(errors.SourceError, match="too short"):
        parse_gpu_metrics(b"\x01")


_LAYOUTS = [(revision, layout) for revision, ls in gpumetrics.LAYOUTS.items() for layout in ls]


@st.composite
def tables(draw: st.DrawFn) -> bytes:
    """A table with a real header (revision and size, or v1.9's) and anything after it."""
    if draw(st.booleans()):
        (major, minor), layout = draw(st.sampled_from(_LAYOUTS))
        header = struct.pack("<HBB", layout.size, major, minor)
        body = draw(st.binary(max_size=layout.size + 8))
        if draw(st.booleans()):  # mostly a whole table, so the fields are really decoded
            body = (body + bytes(layout.size))[: layout.size - 4]
        return header + body
    count = draw(st.integers(-(2**31), 2**31 - 1))
    return struct.pack("<HBBi", 0, 1, 9, count) + draw(st.binary(max_size=200))


@given(st.one_of(st.binary(max_size=64), tables()))
def test_any_bytes_are_a_table_or_a_gpu_metrics_error(blob: bytes) -> None:
    try:
        metrics = parse_gpu_metrics(blob)
    except GpuMetricsError:
        return
    for value in (metrics.socket_power_w, metrics.energy_j, metrics.pcie_speed_gts):
        assert value is None or math.isfinite(value)
    assert all(math.isfinite(busy) for busy in metrics.partition_busy_percent)
