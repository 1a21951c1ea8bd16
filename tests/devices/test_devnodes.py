from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lens.devices import devnodes
from lens.devices.amdgpu import AmdGpuCollector
from lens.devices.dri import DriCollector
from lens.devices.rdma import RdmaCollector
from lens.devices.sysfs import HostFiles


def test_parse_dev_reads_major_and_minor() -> None:
    assert devnodes.parse_dev("226:128\n") == (226, 128)
    assert devnodes.parse_dev("garbage") is None
    assert devnodes.parse_dev(None) is None


def test_every_gpu_node_and_uverbs_of_a_simulated_node_has_its_number(host: HostFiles) -> None:
    gpus = AmdGpuCollector(host).collect().gpus
    table = devnodes.read_device_numbers(
        host, gpus=gpus, dri=DriCollector(host).collect(), rdma=RdmaCollector(host).collect()
    )
    gpu0 = table[(226, 128)]
    assert (gpu0.type, gpu0.number, gpu0.uuid) == ("gpu", 0, gpus[0].uuid)
    assert table[(226, 1)] == gpu0  # card1 is the same GPU
    assert (226, 0) not in table  # card0: the BMC's display
    assert len({d.uuid for d in table.values() if d.type == "gpu"}) == 8
    nic = table[(231, 192)]
    assert (nic.type, nic.number) == ("ib", 0) and nic.uuid
    assert len([d for d in table.values() if d.type == "ib"]) == 8


def test_a_device_number_of_too_many_digits_is_none() -> None:
    # int() of more than 4300 digits raised ValueError out of container attribution.
    assert devnodes.parse_dev("9" * 5000 + ":1\n") is None
    assert devnodes.parse_dev("²:1") is None and devnodes.parse_dev("4095:1048575") == (
        4095,
        2**20 - 1,
    )


@given(
    st.one_of(st.text(), st.tuples(st.integers(), st.integers()).map(lambda t: f"{t[0]}:{t[1]}"))
)
def test_any_dev_file_is_a_device_number_or_none(text: str) -> None:
    number = devnodes.parse_dev(text)
    assert number is None or all(0 <= part < 10**10 for part in number)
