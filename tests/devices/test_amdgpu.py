"""The AMD collector reads a simulated MI300X node's sysfs in base units, and survives breakage."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.devices import amdgpu, gpumetrics
from lens.devices.amdgpu import (
    AmdGpuCollector,
    parse_dpm_current,
    parse_link_speed,
    parse_ras_count,
)
from lens.devices.gpu import COMPAT_FAMILIES, FAMILIES, GpuStatic
from lens.devices.sysfs import HostFiles
from lens.runtime import errors
from lens.runtime.clock import FakeClock
from lens.runtime.textformat import TextRenderer
from lens.sim.hosts.tree import HostTree


def test_parse_ras_count() -> None:
    assert parse_ras_count("ue: 1\nce: 17\nde: 0\n") == (1, 17)
    assert parse_ras_count("ue: 1\n") is None
    assert parse_ras_count("ue: x\nce: 1") is None
    assert parse_ras_count(None) is None


def test_parse_link_speed() -> None:
    assert parse_link_speed("32.0 GT/s PCIe") == 32.0
    assert parse_link_speed("8 GT/s") == 8.0
    assert parse_link_speed("Unknown") is None


def test_parse_dpm_current() -> None:
    assert parse_dpm_current("0: 500Mhz\n1: 1500Mhz *\n2: 2100Mhz\n") == 1500.0
    assert parse_dpm_current("S: 19Mhz *\n0: 500Mhz\n") == 19.0
    assert parse_dpm_current("0: 500Mhz\n") is None


def test_eight_mi300x_in_base_units(mi300x: HostTree) -> None:
    collection = AmdGpuCollector(HostFiles(mi300x.root)).collect()
    assert collection.problems == ()
    assert [g.pci_bus_id for g in collection.gpus] == [g.bdf for g in mi300x.node.gpus]
    for snapshot, gpu, reading in zip(
        collection.gpus, mi300x.node.gpus, mi300x.node.gpu_readings, strict=True
    ):
        assert snapshot.vendor == "amd" and snapshot.index == gpu.index
        assert snapshot.card == f"card{gpu.card}", "card0 is the BMC's display and is skipped"
        assert snapshot.uuid == gpu.unique_id and snapshot.serial == gpu.serial
        assert snapshot.model == "AMD Instinct MI300X OAM", "sysfs product_name without facts"
        assert snapshot.utilization_ratio == pytest.approx(reading.utilization / 100)
        assert snapshot.memory_activity_ratio == pytest.approx(reading.memory_activity / 100)
        assert snapshot.memory_total_bytes == 192 * 1024**3
        assert snapshot.memory_used_bytes == reading.vram_used_bytes
        assert snapshot.power_watts == pytest.approx(reading.power_w)
        assert snapshot.power_limit_watts == pytest.approx(750)
        temperatures = dict(snapshot.temperatures_celsius)
        assert "edge" not in temperatures, "MI300 has no edge sensor"
        assert temperatures["junction"] == pytest.approx(reading.temp_junction_c)
        assert temperatures["memory"] == pytest.approx(reading.temp_mem_c)
        assert dict(snapshot.clocks_hertz)["sclk"] == pytest.approx(reading.sclk_mhz * 1e6)
        assert snapshot.pcie_link_speed_gts == 32.0 and snapshot.pcie_link_width == 16
        assert snapshot.energy_joules == pytest.approx(reading.energy_j, abs=0.01)
        assert ("umc", "correctable", reading.ecc_correctable) in snapshot.ecc_errors
        assert snapshot.numa_node == gpu.numa_node


def test_counters_grow_as_time_passes(mi300x: HostTree, clock: FakeClock) -> None:
    collector = AmdGpuCollector(HostFiles(mi300x.root))
    before = collector.collect().gpus[7].energy_joules
    clock.advance(10)
    mi300x.update()
    after = collector.collect().gpus[7].energy_joules
    assert before is not None and after is not None
    assert after - before == pytest.approx(mi300x.node.gpu_readings[7].power_w * 10, rel=0.01)


def test_static_facts_name_the_model_and_serial(mi300x: HostTree) -> None:
    bdf = mi300x.node.gpus[0].bdf
    facts = {bdf: GpuStatic(pci_bus_id=bdf, market_name="AMD Instinct MI300X", serial="S1")}
    gpus = AmdGpuCollector(HostFiles(mi300x.root), static_facts=lambda: facts).collect().gpus
    assert (gpus[0].model, gpus[0].serial, gpus[0].static) == (
        "AMD Instinct MI300X",
        "S1",
        facts[bdf],
    )
    assert gpus[1].static is None


def test_partitions_report_their_own_activity(cpx: HostTree) -> None:
    gpus = AmdGpuCollector(HostFiles(cpx.root)).collect().gpus
    assert len(gpus) == 2, "partitions are not GPUs of their own"
    assert all(len(g.partition_utilization_ratios) == 8 for g in gpus)


def test_a_missing_attribute_is_left_out(mi300x: HostTree) -> None:
    device = f"sys/devices/pci0000:00/{mi300x.node.gpus[2].bdf}"
    mi300x.remove(f"{device}/gpu_busy_percent")
    collection = AmdGpuCollector(HostFiles(mi300x.root)).collect()
    assert collection.gpus[2].utilization_ratio is None
    assert collection.gpus[3].utilization_ratio is not None
    assert collection.problems == (), "an absent attribute is unsupported, not a problem"


def test_garbage_and_unreadable_files_are_problems_not_crashes(mi300x: HostTree) -> None:
    device = f"sys/devices/pci0000:00/{mi300x.node.gpus[1].bdf}"
    mi300x.corrupt(f"{device}/mem_info_vram_used", "lots\n")
    mi300x.corrupt(f"{device}/gpu_metrics", b"\x01\x00\x01\x63")
    mi300x.remove(f"{device}/mem_busy_percent")
    (mi300x.root / device / "mem_busy_percent").mkdir()
    collection = AmdGpuCollector(HostFiles(mi300x.root)).collect()
    gpu = collection.gpus[1]
    assert gpu.memory_used_bytes is None and gpu.memory_activity_ratio is None
    assert gpu.energy_joules is None and gpu.utilization_ratio is not None
    problems = "\n".join(collection.problems)
    assert "mem_info_vram_used: not a number: 'lots'" in problems
    assert "gpu_metrics" in problems and "mem_busy_percent: Is a directory" in problems


def test_no_amdgpu_cards_is_no_data(h100: HostTree) -> None:
    with pytest.raises(errors.NoDataError, match="no amdgpu cards"):
        AmdGpuCollector(HostFiles(h100.root)).collect()


def test_find_cards_skips_the_bmc_display(mi300x: HostTree) -> None:
    cards = amdgpu.find_cards(HostFiles(mi300x.root))
    assert [c[0] for c in cards] == [f"card{i}" for i in range(1, 9)]
    assert cards[0][1] == "/sys/class/drm/card1/device"


def test_kept_open_files_follow_the_readings(mi300x: HostTree, clock: FakeClock) -> None:
    host = HostFiles(mi300x.root, keep_open=True)
    collector = AmdGpuCollector(host)
    collector.collect()  # discovery reads identities once; the next sweep closes those
    before = collector.collect().gpus[7].energy_joules
    opened = host.open_files
    clock.advance(10)
    mi300x.update()
    after = collector.collect().gpus[7].energy_joules
    assert before is not None and after is not None and after > before
    assert host.open_files == opened, "the same descriptors, read again"


@pytest.mark.parametrize("text", ["1.2.3 GT/s", ". GT/s", "GT/s", "x", "", None])
def test_a_link_speed_that_is_no_number_is_unknown(text: str | None) -> None:
    # Issue 16, point 10: "1.2.3 GT/s" raised ValueError and took the collector down.
    assert amdgpu.parse_link_speed(text) is None
    assert amdgpu.parse_link_speed("16.0 GT/s PCIe") == 16.0


# --- issue 16, point 10: one odd sysfs value never takes the collector down ----------------------


def test_numbers_too_large_for_a_float_are_unknown() -> None:
    # float("9" * 400) is infinity: a link speed or clock level of infinity is no reading.
    assert parse_link_speed("9" * 400 + " GT/s") is None
    assert parse_dpm_current("1: " + "9" * 400 + "Mhz *") is None
    assert parse_ras_count(f"ue: {2**64}\nce: 1") is None


def test_a_value_wider_than_64_bits_is_a_problem_not_a_crash(mi300x: HostTree) -> None:
    # 400 digits in mem_info_vram_total raised OverflowError (int / float) out of collect().
    device = f"sys/devices/pci0000:00/{mi300x.node.gpus[4].bdf}"
    mi300x.corrupt(f"{device}/mem_info_vram_total", "9" * 400 + "\n")
    collection = AmdGpuCollector(HostFiles(mi300x.root)).collect()
    assert collection.gpus[4].memory_total_bytes is None
    assert collection.gpus[4].memory_used_bytes is not None, "the rest of the GPU is read"
    assert any("mem_info_vram_total: not a number" in p for p in collection.problems)


# --- property: any content of any attribute is a reading or a problem, and renders ---------------

_ATTRIBUTES = (
    "gpu_busy_percent",
    "mem_busy_percent",
    "mem_info_vram_total",
    "mem_info_vram_used",
    "current_link_speed",
    "current_link_width",
    "pcie_replay_count",
    "gpu_metrics",
    "ras/umc_err_count",
    "hwmon/hwmon2/power1_input",
    "hwmon/hwmon2/power1_cap",
    "hwmon/hwmon2/temp2_input",
    "hwmon/hwmon2/freq1_input",
)
_CONTENTS = st.one_of(
    st.binary(max_size=64),
    st.text(max_size=40).map(str.encode),
    st.sampled_from([b"9" * 400, b"-1", b"0x" + b"f" * 17, b"ue: 1\nce: " + b"9" * 30, b"nan"]),
    st.binary(min_size=4, max_size=64).map(
        lambda tail: gpumetrics.encode((1, 8), {})[: -len(tail)] + tail
    ),
)


@given(attribute=st.sampled_from(_ATTRIBUTES), content=_CONTENTS)
def test_any_attribute_content_is_a_reading_or_a_problem(
    mi300x: HostTree, attribute: str, content: bytes
) -> None:
    device = f"sys/devices/pci0000:00/{mi300x.node.gpus[0].bdf}"
    mi300x.corrupt(f"{device}/{attribute}", content)
    collection = AmdGpuCollector(HostFiles(mi300x.root)).collect()
    assert len(collection.gpus) == 8
    text = TextRenderer().render_groups(
        [(FAMILIES, collection.gpus), (COMPAT_FAMILIES, collection.gpus)], opt_in=frozenset()
    )
    text.encode()
    for reading in (collection.gpus[0].power_watts, collection.gpus[0].pcie_link_speed_gts):
        assert reading is None or math.isfinite(reading)
