"""The RDMA collector reads a simulated node's /sys/class/infiniband in the kernel's units."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.devices import ib, rdma
from lens.devices.ib import RdmaSnapshot
from lens.devices.rdma import RdmaCollector
from lens.devices.sysfs import HostFiles
from lens.runtime import errors
from lens.runtime.clock import FakeClock
from lens.runtime.textformat import TextRenderer
from lens.sim.hosts.tree import HostTree


def test_parse_enum_and_rate() -> None:
    assert rdma.parse_enum("4: ACTIVE") == "ACTIVE" and rdma.parse_enum("1: CA") == "CA"
    assert rdma.parse_enum("7: Phy Test") == "Phy Test" and rdma.parse_enum(None) is None
    assert rdma.parse_rate("400 Gb/sec (4X NDR)") == 50e9
    assert rdma.parse_rate("2.5 Gb/sec (1X SDR)") == 2.5e9 / 8
    assert rdma.parse_rate("garbage") is None


def test_eight_roce_ports(mi300x: HostTree, clock: FakeClock) -> None:
    clock.advance(30)
    mi300x.update()
    snapshot = RdmaCollector(HostFiles(mi300x.root)).collect()
    assert snapshot.source == "sysfs" and snapshot.problems == ()
    assert [d.name for d in snapshot.devices] == [f"mlx5_{i}" for i in range(8)]
    for device, nic, reading in zip(
        snapshot.devices, mi300x.node.nics, mi300x.node.port_readings, strict=True
    ):
        assert device.index == nic.index and device.node_type == "CA"
        assert (device.node_guid, device.sys_image_guid) == (nic.node_guid, nic.sys_image_guid)
        assert device.fw_version == "28.39.1002" and device.pci_bus_id == nic.bdf
        assert device.uverbs == (f"uverbs{nic.uverbs}",) and device.numa_node == nic.numa_node
        assert device.netdevs == (nic.netdev,)
        (port,) = device.ports
        assert (port.port, port.state, port.physical_state) == (1, "ACTIVE", "LinkUp")
        assert port.link_layer == "Ethernet" and port.netdev == nic.netdev
        assert port.rate_bytes_per_second == 50e9
        assert port.transmit_bytes == reading.xmit_bytes // 4 * 4, "4-byte words to bytes"
        assert port.receive_bytes == reading.rcv_bytes // 4 * 4
        assert port.transmit_packets == reading.xmit_packets
        counters = dict(port.counters)
        assert "port_xmit_data" not in counters and counters["symbol_error"] == 0
        assert dict(port.hw_counters) == reading.hw_counters, "lifespan is not a counter"


def test_infiniband_ports_have_no_ethernet_netdev(cpx: HostTree) -> None:
    snapshot = RdmaCollector(HostFiles(cpx.root)).collect()
    assert [p.link_layer for p in snapshot.ports] == ["InfiniBand", "InfiniBand"]
    assert [p.netdev for p in snapshot.ports] == ["ib0", "ib1"], "the device's only netdev"


def test_a_saturated_32_bit_data_counter_is_left_out(mi300x: HostTree) -> None:
    mi300x.corrupt("sys/class/infiniband/mlx5_3/ports/1/counters/port_rcv_data", "4294967295\n")
    snapshot = RdmaCollector(HostFiles(mi300x.root)).collect()
    port = snapshot.devices[3].ports[0]
    assert port.receive_bytes is None and port.transmit_bytes is not None
    assert snapshot.problems == ("mlx5_3/1: port_rcv_data saturated at 2^32-1",)


def test_a_down_port_and_missing_counters(mi300x: HostTree) -> None:
    mi300x.corrupt("sys/class/infiniband/mlx5_1/ports/1/state", "1: DOWN\n")
    mi300x.remove("sys/class/infiniband/mlx5_1/ports/1/counters/port_xmit_data")
    mi300x.remove("sys/class/infiniband/mlx5_1/ports/1/rate")
    (mi300x.root / "sys/class/infiniband/mlx5_1/ports/1/hw_counters/out_of_buffer").unlink()
    (mi300x.root / "sys/class/infiniband/mlx5_1/ports/1/hw_counters/out_of_buffer").mkdir()
    snapshot = RdmaCollector(HostFiles(mi300x.root)).collect()
    port = snapshot.devices[1].ports[0]
    assert port.state == "DOWN" and port.rate_bytes_per_second is None
    assert port.transmit_bytes is None and "out_of_buffer" not in dict(port.hw_counters)
    assert snapshot.problems == (
        "/sys/class/infiniband/mlx5_1/ports/1/hw_counters/out_of_buffer: Is a directory",
    )


def test_a_device_that_disappears_is_gone_next_cycle(mi300x: HostTree) -> None:
    collector = RdmaCollector(HostFiles(mi300x.root))
    assert len(collector.collect().devices) == 8
    (mi300x.root / "sys/class/infiniband/mlx5_7").unlink()
    assert [d.name for d in collector.collect().devices] == [f"mlx5_{i}" for i in range(7)]


def test_no_devices_is_no_data_unless_a_fallback_is_given(tmp_path: Path) -> None:
    with pytest.raises(errors.NoDataError, match="no RDMA devices"):
        RdmaCollector(HostFiles(tmp_path)).collect()
    fallback = RdmaSnapshot(devices=(), source="rdma-tool")
    assert RdmaCollector(HostFiles(tmp_path), fallback=lambda: fallback).collect() is fallback


@pytest.mark.parametrize("text", ["... Gb/sec", "1.2.3 Gb/sec (4X)", "Gb/sec", "", None])
def test_a_rate_that_is_no_number_is_unknown(text: str | None) -> None:
    # Issue 16, point 10: "... Gb/sec" raised ValueError and took the collector down.
    assert rdma.parse_rate(text) is None
    assert rdma.parse_rate("200 Gb/sec (4X HDR)") == 25e9


def test_a_rate_too_large_for_a_float_is_unknown() -> None:
    assert rdma.parse_rate("9" * 400 + " Gb/sec") is None


@pytest.mark.parametrize(
    ("name", "port"), [("1", 1), ("2", 2), ("²", None), ("x", None), ("-1", None), ("9" * 30, None)]
)
def test_port_directories(name: str, port: int | None) -> None:
    # "²".isdigit() is True but int("²") raises ValueError: the collector went down.
    assert rdma.parse_port(name) == port


def test_a_port_directory_named_with_a_superscript_is_skipped(mi300x: HostTree) -> None:
    (mi300x.root / "sys/class/infiniband/mlx5_2/ports/²").mkdir()
    snapshot = RdmaCollector(HostFiles(mi300x.root)).collect()
    assert [p.port for p in snapshot.devices[2].ports] == [1]


def test_a_counter_wider_than_64_bits_is_left_out(mi300x: HostTree) -> None:
    # 400 digits became an int no float holds: rendering it raised OverflowError.
    counter = "sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_buffer"
    mi300x.corrupt(counter, "9" * 400 + "\n")
    (port,) = RdmaCollector(HostFiles(mi300x.root)).collect().devices[0].ports
    assert "out_of_buffer" not in dict(port.hw_counters) and port.hw_counters


# --- property: any content of a port attribute is a reading or left out, and renders -------------

_PORT = "sys/class/infiniband/mlx5_0/ports/1"
_ATTRIBUTES = (
    "state",
    "phys_state",
    "rate",
    "link_layer",
    "counters/port_rcv_data",
    "counters/link_downed",
    "hw_counters/out_of_buffer",
)
_CONTENTS = st.one_of(
    st.binary(max_size=48),
    st.text(max_size=40),
    st.sampled_from(["9" * 400, "-1", "4294967295", "0x" + "f" * 17, "1e999 Gb/sec", "4: ²"]),
)


@given(attribute=st.sampled_from(_ATTRIBUTES), content=_CONTENTS)
def test_any_port_attribute_content_is_read_or_left_out(
    mi300x: HostTree, attribute: str, content: str | bytes
) -> None:
    mi300x.corrupt(f"{_PORT}/{attribute}", content)
    snapshot = RdmaCollector(HostFiles(mi300x.root)).collect()
    (port,) = snapshot.devices[0].ports
    rate = port.rate_bytes_per_second
    assert rate is None or math.isfinite(rate)
    assert all(-(2**63) <= value < 2**64 for _, value in (*port.counters, *port.hw_counters))
    ports = snapshot.ports
    text = TextRenderer().render_groups(
        [(ib.DEVICE_FAMILIES, snapshot.devices), (ib.PORT_FAMILIES, ports)], opt_in=frozenset()
    )
    (text + ib.render_compat(ports)).encode()


@given(st.one_of(st.text(), st.sampled_from(["9" * 400 + " Gb/sec", "1e999 Gb/sec", "4: "])))
def test_any_rate_and_state_text_is_a_value_or_unknown(text: str) -> None:
    rate = rdma.parse_rate(text)
    assert rate is None or (math.isfinite(rate) and rate >= 0)
    state = rdma.parse_enum(text)
    assert state is None or isinstance(state, str)


@pytest.mark.parametrize(
    ("name", "counter"),
    [("port_rcv_data", True), ("VL15_dropped", True), ("a-b", False), ("a\nb", False), ("", False)],
)
def test_counter_names(name: str, counter: bool) -> None:
    assert rdma.is_counter_name(name) is counter


def test_a_counter_file_of_another_spelling_is_left_out(mi300x: HostTree) -> None:
    mi300x.corrupt("sys/class/infiniband/mlx5_0/ports/1/hw_counters/odd-name", "5\n")
    (port,) = RdmaCollector(HostFiles(mi300x.root)).collect().devices[0].ports
    assert "odd-name" not in dict(port.hw_counters) and "out_of_buffer" in dict(port.hw_counters)
