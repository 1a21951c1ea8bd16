"""The `rdma` CLI fallback: dev, link and statistic in JSON and text, and a reader over them."""

from __future__ import annotations

import pytest

from lens.devices import rdmatool
from lens.devices.rdmatool import RdmaToolReader
from lens.devices.tools import ToolRunner
from lens.runtime import errors
from lens.sim.hosts.tree import HostTree

DEV_JSON = (
    '[{"ifindex":0,"ifname":"mlx5_0","node_type":"ca","fw":"28.39.1002",'
    '"node_guid":"1070:fd03:00c1:59c4","sys_image_guid":"1070:fd03:00c1:59c4"},'
    '{"ifindex":2,"ifname":"ionic_1","node_type":"rnic","fw":"1.2"}]\n'
)
DEV_TEXT = (
    "0: mlx5_0: node_type ca fw 28.39.1002 node_guid 1070:fd03:00c1:59c4 "
    "sys_image_guid 1070:fd03:00c1:59c4\n"
)
LINK_TEXT = (
    "link rocep68s0/1 state ACTIVE physical_state LINK_UP netdev enp68s0\n"
    "link ibp12s0/1 subnet_prefix fe80:0000:0000:0000 lid 12 sm_lid 1 lmc 0 state DOWN "
    "physical_state POLLING\n"
)
STAT_TEXT = (
    "link mlx5_0/1\n    rx_write_requests 12\n    rx_read_requests 0\n    out_of_buffer 3\n"
    "link mlx5_1/1\n    rx_write_requests 7\n    weird n/a\n"
)
STAT_JSON = (
    '[{"ifname":"rocep132s0","port":1,"tx_rdma_ucast_bytes":3489656928,'
    '"resp_rx_outof_buf":0},{"ifname":"ionic_1","port":1,"tx_rdma_ucast_bytes":5}]'
)


def test_dev_json() -> None:
    first, second = rdmatool.parse_dev(DEV_JSON)
    assert (first.name, first.index, first.node_type, first.fw_version) == (
        "mlx5_0",
        0,
        "CA",
        "28.39.1002",
    )
    assert first.node_guid == first.sys_image_guid == "1070:fd03:00c1:59c4"
    assert (second.name, second.index, second.node_type, second.node_guid) == (
        "ionic_1",
        2,
        "RNIC",
        None,
    )


def test_dev_text() -> None:
    (device,) = rdmatool.parse_dev(DEV_TEXT)
    assert (device.name, device.index, device.node_type) == ("mlx5_0", 0, "CA")
    assert device.sys_image_guid == "1070:fd03:00c1:59c4"


def test_link_text_in_sysfs_spelling() -> None:
    roce, ib = rdmatool.parse_link(LINK_TEXT)
    assert (roce.device, roce.port, roce.state, roce.physical_state, roce.netdev) == (
        "rocep68s0",
        1,
        "ACTIVE",
        "LinkUp",
        "enp68s0",
    )
    assert (ib.device, ib.state, ib.physical_state, ib.netdev) == (
        "ibp12s0",
        "DOWN",
        "Polling",
        None,
    )


def test_link_json() -> None:
    text = (
        '[{"ifindex":2,"ifname":"rocep68s0","port":1,"state":"ACTIVE",'
        '"physical_state":"LINK_UP","netdev":"enp68s0","netdev_index":4}]'
    )
    (port,) = rdmatool.parse_link(text)
    assert (port.device, port.physical_state, port.netdev) == ("rocep68s0", "LinkUp", "enp68s0")


def test_statistic_text_skips_non_numbers() -> None:
    assert rdmatool.parse_statistic(STAT_TEXT) == {
        ("mlx5_0", 1): {"rx_write_requests": 12, "rx_read_requests": 0, "out_of_buffer": 3},
        ("mlx5_1", 1): {"rx_write_requests": 7},
    }


def test_statistic_json() -> None:
    assert rdmatool.parse_statistic(STAT_JSON) == {
        ("rocep132s0", 1): {"tx_rdma_ucast_bytes": 3489656928, "resp_rx_outof_buf": 0},
        ("ionic_1", 1): {"tx_rdma_ucast_bytes": 5},
    }


def test_malformed_json_is_a_source_error() -> None:
    with pytest.raises(errors.SourceError, match="rdma dev printed malformed JSON"):
        rdmatool.parse_dev("[{broken")
    with pytest.raises(errors.SourceError, match="rdma statistic printed malformed JSON"):
        rdmatool.parse_statistic('[{"ifname": "mlx5_0", ')
    assert rdmatool.parse_dev("") == [] and rdmatool.parse_link("") == []


@pytest.mark.slow_timeout
def test_the_reader_over_the_simulated_tool(mi300x: HostTree) -> None:
    snapshot = RdmaToolReader(ToolRunner(root=str(mi300x.root))).read()
    assert snapshot.source == "rdma-tool" and snapshot.problems == ()
    assert [d.name for d in snapshot.devices] == [n.name for n in mi300x.node.nics]
    device, nic = snapshot.devices[2], mi300x.node.nics[2]
    assert device.node_guid == nic.node_guid and device.fw_version == nic.firmware
    (port,) = device.ports
    assert (port.state, port.physical_state, port.netdev) == ("ACTIVE", "LinkUp", nic.netdev)
    assert dict(port.hw_counters) == mi300x.node.port_readings[2].hw_counters


@pytest.mark.slow_timeout
def test_the_reader_without_the_tool(tmp_path) -> None:
    reader = RdmaToolReader(ToolRunner(root=str(tmp_path)), tool=str(tmp_path / "rdma"))
    with pytest.raises(errors.NoDataError, match="rdma is not installed"):
        reader.read()


@pytest.mark.slow_timeout
def test_the_reader_when_the_tool_prints_garbage(mi300x: HostTree) -> None:
    mi300x.break_tool("rdma", "garbage")
    with pytest.raises(errors.SourceError):
        RdmaToolReader(ToolRunner(root=str(mi300x.root))).read()


def test_link_lines_cut_short_or_odd_ports_keep_the_rest() -> None:
    # Issue 16, point 10: a truncated `rdma link` line raised IndexError.
    text = "link mlx5_0/\nlink\nlink mlx5_1/1 state ACTIVE physical_state LINK_UP netdev eth1\n"
    ports = rdmatool.parse_link(text)
    assert [(p.device, p.port, p.state) for p in ports] == [
        ("mlx5_0", 1, None),
        ("mlx5_1", 1, "ACTIVE"),
    ]
    odd = '[{"ifname": "mlx5_0", "port": "x"}, {"ifname": "mlx5_1", "port": [2]}]'
    assert [(p.device, p.port) for p in rdmatool.parse_link(odd)] == [("mlx5_0", 1), ("mlx5_1", 1)]
