"""The device inventory on the wire: parts read arrive, parts not read stay absent (the server
then leaves them alone), and an inventory the store cannot hold is refused by name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.reports import inventorywire
from lens.reports.inventory import DeviceInventory, GpuFacts, RdmaFacts, RdmaPortFacts
from lens.runtime import wirevalues
from lens.runtime.wirevalues import WireError

text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), min_size=1, max_size=30
)
maybe_text = st.none() | text
small = st.integers(min_value=-1, max_value=2**31 - 1)
gpus = st.builds(
    GpuFacts,
    uuid=text,
    index=small,
    vendor=st.sampled_from(["amd", "nvidia"]),
    model=text,
    serial=text,
    pci_bus_id=text,
    vbios=maybe_text,
    vram_bytes=st.none() | st.integers(min_value=0, max_value=2**62),
    numa_node=st.none() | small,
    compute_partition=maybe_text,
    memory_partition=maybe_text,
    driver_version=maybe_text,
    health=maybe_text,
)
ports = st.builds(
    RdmaPortFacts,
    port=st.integers(min_value=1, max_value=8),
    state=maybe_text,
    physical_state=maybe_text,
    link_layer=maybe_text,
    rate_bytes_per_second=st.none() | st.floats(allow_nan=False, allow_infinity=False),
    netdev=maybe_text,
)
rdma = st.builds(
    RdmaFacts,
    name=text,
    node_guid=maybe_text,
    sys_image_guid=maybe_text,
    fw_version=maybe_text,
    node_type=maybe_text,
    hca_type=maybe_text,
    board_id=maybe_text,
    pci_bus_id=maybe_text,
    numa_node=st.none() | small,
    netdevs=st.lists(text, max_size=2).map(tuple),
    ports=st.lists(ports, max_size=2).map(tuple),
)


def _received(inventory: DeviceInventory) -> DeviceInventory:
    record = inventorywire.inventory_record(inventory)
    wirevalues.set_time(record.observed_at, inventory.time)
    return inventorywire.device_inventory(pb.Record.FromString(record.SerializeToString()))


@given(
    st.none() | st.lists(gpus, unique_by=lambda g: g.uuid, max_size=3).map(tuple),
    st.none() | st.lists(rdma, unique_by=lambda d: d.name, max_size=3).map(tuple),
)
def test_an_inventory_arrives_as_sent(
    gpu_part: tuple[GpuFacts, ...] | None, rdma_part: tuple[RdmaFacts, ...] | None
) -> None:
    sent = DeviceInventory(time=1_700_000_000.0, gpus=gpu_part, rdma=rdma_part)
    assert _received(sent) == sent


def test_a_part_read_and_empty_differs_from_a_part_not_read() -> None:
    received = _received(DeviceInventory(time=0.0, gpus=(), rdma=None))
    assert received.gpus == ()
    assert received.rdma is None


def _gpu(uuid: str) -> GpuFacts:
    return GpuFacts(uuid=uuid, index=0, vendor="amd", model="MI300X", serial="S", pci_bus_id="")


def test_a_gpu_listed_twice_or_without_a_uuid_is_refused() -> None:
    with pytest.raises(WireError, match="device listed twice: GPU uuid"):
        _received(DeviceInventory(time=0.0, gpus=(_gpu("a"), _gpu("a"))))
    with pytest.raises(WireError, match="GPU without a uuid"):
        _received(DeviceInventory(time=0.0, gpus=(_gpu(""),)))


def test_the_server_refuses_a_text_longer_than_its_column() -> None:
    record = inventorywire.inventory_record(DeviceInventory(time=0.0, gpus=(_gpu("a"),)))
    record.devices.gpus.items[0].serial = "s" * 500
    with pytest.raises(WireError, match="text too long: serial"):
        inventorywire.device_inventory(record)


def test_the_agent_cuts_a_text_longer_than_its_column() -> None:
    long = GpuFacts(
        uuid="u", index=0, vendor="amd", model="m" * 300, serial="", pci_bus_id="", vbios="\0v"
    )
    (gpu,) = _received(DeviceInventory(time=0.0, gpus=(long,))).gpus or ()
    assert gpu.model == "m" * inventorywire.NAME_CHARS
    assert gpu.vbios == "v"
