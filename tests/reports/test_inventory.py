"""The inventory's facts mirror what the node agent's devices already read, field for field."""

from __future__ import annotations

import typing

from lens.devices.gpu import GpuSnapshot, GpuStatic
from lens.devices.ib import RdmaDevice, RdmaPort
from lens.reports.inventory import GpuFacts, RdmaFacts, RdmaPortFacts


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
