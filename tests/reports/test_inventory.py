"""The inventory's facts mirror what the node agent's devices already read, field for field."""

from __future__ import annotations

import typing

from lens.devices.gpu import GpuSnapshot, GpuStatic
from lens.devices.ib import RdmaDevice, RdmaPort
from lens.reports.inventory import GpuFacts, RdmaFacts, RdmaPortFacts, fill_unknown


def _hints(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls)


def test_every_gpu_fact_is_read_by_the_gpu_snapshot_or_its_static_facts() -> None:
    read = {**_hints(GpuStatic), **_hints(GpuSnapshot)}
    for name in _hints(GpuFacts):
        assert name in read, name


def test_every_rdma_fact_is_an_rdma_device_field_of_the_same_type() -> None:
    device = _hints(RdmaDevice)
    for name, hint in _hints(RdmaFacts).items():
        if name == "ports":
            continue
        assert device[name] == hint, name


def test_every_port_fact_is_an_rdma_port_field_of_the_same_type() -> None:
    port = _hints(RdmaPort)
    for name, hint in _hints(RdmaPortFacts).items():
        assert port[name] == hint, name


def _sysfs_read() -> RdmaFacts:
    port = RdmaPortFacts(port=1, state="ACTIVE", link_layer="Ethernet", netdev="enp7s0np0")
    return RdmaFacts(
        name="mlx5_0", node_guid="b8ce:1", hca_type="MT4129", netdevs=("enp7s0np0",), ports=(port,)
    )


def test_a_read_that_knows_less_keeps_what_an_earlier_read_of_the_device_knew() -> None:
    before = _sysfs_read()
    tool = RdmaFacts(
        name="mlx5_0", node_guid="b8ce:1", ports=(RdmaPortFacts(port=1, state="DOWN"),)
    )
    filled = fill_unknown(tool, before)
    assert (filled.hca_type, filled.netdevs) == ("MT4129", ("enp7s0np0",))
    assert filled.ports == (
        RdmaPortFacts(port=1, state="DOWN", link_layer="Ethernet", netdev="enp7s0np0"),
    )
    assert fill_unknown(before, before) == before
    assert fill_unknown(tool, None) is tool


def test_another_device_under_the_same_name_takes_nothing_from_the_one_before() -> None:
    replaced = RdmaFacts(name="mlx5_0", node_guid="b8ce:2")
    assert fill_unknown(replaced, _sysfs_read()) is replaced
