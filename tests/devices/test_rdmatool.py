"""The `rdma` CLI fallback: dev, link and statistic in JSON and text, and a reader over them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.devices import ib, rdmatool
from lens.devices.ib import RdmaSnapshot
from lens.devices.rdmatool import RdmaToolReader
from lens.devices.tools import ToolRunner
from lens.runtime import errors
from lens.runtime.textformat import TextRenderer
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


# --- issue 16, point 10: JSON numbers like 1e999 and wrong types in `rdma -j` --------------------


def test_dev_json_with_odd_numbers_and_types_keeps_the_devices() -> None:
    # An ifindex of 1e999 raised OverflowError, "x" a ValueError: the collector went down.
    text = (
        '[{"ifindex": 1e999, "ifname": "mlx5_0", "node_type": ["ca"], "fw": 28.39},'
        '{"ifindex": "x", "ifname": "mlx5_1", "node_guid": {"a": 1}},'
        '{"ifindex": 2, "ifname": ["mlx5_2"]},'
        '{"ifindex": -1, "ifname": "mlx5_3", "sys_image_guid": "\\ud800"}]'
    )
    devices = rdmatool.parse_dev(text)
    assert [(d.name, d.index) for d in devices] == [("mlx5_0", 0), ("mlx5_1", 1), ("mlx5_3", 3)]
    assert devices[0].node_type is None and devices[0].fw_version == "28.39"
    assert devices[1].node_guid is None and devices[2].sys_image_guid == "?"


def test_statistic_json_keeps_only_64_bit_counters() -> None:
    # A port of 1e999 raised OverflowError; a counter of 1e999 or true was kept as a number.
    text = (
        '[{"ifname": "mlx5_0", "port": 1e999, "good": 7, "huge": 1e999, "float": 1.5, '
        '"flag": true, "negative": -1, "wide": 18446744073709551616, "text": "5"},'
        '{"ifname": "mlx5_1", "port": "x", "max": 18446744073709551615}]'
    )
    assert rdmatool.parse_statistic(text) == {
        ("mlx5_0", 1): {"good": 7},
        ("mlx5_1", 1): {"max": 2**64 - 1},
    }


def test_counter_names_are_spelled_as_the_kernel_spells_them() -> None:
    # A name with a newline broke the `# HELP rdma_stat_...` line, so the whole scrape; "a-b"
    # and "a_b" both became rdma_stat_a_b, twice the same series.
    text = '[{"ifname": "mlx5_0", "a\\nb": 1, "a-b": 2, "a_b": 3, "": 4, "VL15_dropped": 5}]'
    assert rdmatool.parse_statistic(text) == {("mlx5_0", 1): {"a_b": 3, "VL15_dropped": 5}}
    assert rdmatool.parse_statistic("link mlx5_0/1 a-b 1 ok 2") == {("mlx5_0", 1): {"ok": 2}}


def test_link_json_fields_of_the_wrong_type_are_unknown() -> None:
    text = '[{"ifname": "mlx5_0", "port": 1, "state": ["ACTIVE"], "physical_state": {}}]'
    (port,) = rdmatool.parse_link(text)
    assert (port.device, port.port, port.state, port.physical_state) == ("mlx5_0", 1, None, None)


def test_text_numbers_that_are_digits_to_python_only_are_skipped() -> None:
    # "²".isdigit() is True but int("²") raises: that took the collector down.
    assert rdmatool.parse_dev("²: mlx5_0: node_type ca\n1: mlx5_1: node_type ca\n")[0].index == 1
    assert rdmatool.parse_link("link mlx5_0/² state ACTIVE\n")[0].port == 1
    text = "link mlx5_0/²\n    rx ²\n    tx " + "9" * 30 + "\n    ok 5\n"
    assert rdmatool.parse_statistic(text) == {("mlx5_0", 1): {"ok": 5}}


def test_json_nested_too_deeply_is_a_source_error() -> None:
    # It raised RecursionError.
    with pytest.raises(errors.SourceError, match="rdma link printed JSON nested too deeply"):
        rdmatool.parse_link("[" * 100_000 + "]" * 100_000)


@pytest.mark.slow_timeout
def test_the_reader_over_a_tool_printing_odd_json(mi300x: HostTree) -> None:
    # The same answer to dev, link and statistic: each reads what it knows from it.
    mi300x.tool_prints(
        "rdma",
        '[{"ifindex": 1e999, "ifname": "mlx5_0", "port": 1e999, "state": ["ACTIVE"], '
        '"node_type": "rnic", "out_of_buffer": 3, "rx_write_requests": 1e999, "flag": true}]\n',
    )
    snapshot = RdmaToolReader(ToolRunner(root=str(mi300x.root))).read()
    (device,) = snapshot.devices
    (port,) = device.ports
    assert (device.name, device.index, device.node_type) == ("mlx5_0", 0, "RNIC")
    assert (port.port, port.state, port.hw_counters) == (1, None, (("out_of_buffer", 3),))
    _render(snapshot)


# --- property: any output is devices, ports and counters, or a SourceError ---------------------

TEXTS = st.one_of(
    st.text(st.characters(exclude_categories=())),
    st.sampled_from(["", "1", "²", "1e999", "ACTIVE", "LINK_UP", "ca", "\ud800", "[/]"]),
)
VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        TEXTS,
        st.sampled_from([2**64, 2**64 - 1, -1, 1e999]),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXTS, inner, max_size=3),
    max_leaves=6,
)
KEYS = ["ifindex", "ifname", "port", "node_type", "fw", "node_guid", "state", "physical_state"]
ENTRIES = st.dictionaries(st.one_of(st.sampled_from(KEYS), TEXTS), VALUES, max_size=6)
WORDS = st.one_of(st.sampled_from(["link", "mlx5_0/1", "1:", "state", "7", "\n"]), TEXTS)
TEXT_OUTPUTS = st.lists(WORDS, max_size=12).map(" ".join)


def _render(snapshot: RdmaSnapshot) -> None:
    """Render as the agent does and encode as it serves the text."""
    ports = snapshot.ports
    text = TextRenderer().render_groups(
        [(ib.DEVICE_FAMILIES, snapshot.devices), (ib.PORT_FAMILIES, ports)], opt_in=frozenset()
    )
    (text + ib.render_compat(ports)).encode()


def _check(text: str) -> None:
    """Each parser's result is well formed and renders, or it raised a SourceError."""
    try:
        devices = rdmatool.parse_dev(text)
        ports = rdmatool.parse_link(text)
        counters = rdmatool.parse_statistic(text)
    except errors.SourceError:
        return
    for device in devices:
        assert device.name and 0 <= device.index < 2**32
    for (name, port), values in counters.items():
        assert 0 <= port < 2**32 and all(0 <= v < 2**64 for v in values.values())
        ports.append(ib.RdmaPort(device=name, port=port, hw_counters=tuple(values.items())))
    assert all(0 <= p.port < 2**32 for p in ports)
    _render(
        RdmaSnapshot(
            devices=(*devices, ib.RdmaDevice(name="x", index=0, ports=tuple(ports))),
            source="rdma-tool",
        )
    )


@given(st.lists(ENTRIES, max_size=4).map(json.dumps))
def test_any_json_from_the_tool_is_read_or_a_source_error(text: str) -> None:
    _check(text)


@given(st.one_of(TEXTS, TEXT_OUTPUTS, VALUES.map(json.dumps)))
def test_any_text_from_the_tool_is_read_or_a_source_error(text: str) -> None:
    _check(text)
