from __future__ import annotations

import pytest

from lens.containers import wire
from lens.containers.model import (
    Container,
    ContainerEvent,
    Device,
    EventType,
    Inventory,
    Pod,
    Source,
)
from lens.proto._generated.lens.v1 import events_pb2 as pb

CONTAINER = Container(
    id="3f9a",
    name="main",
    pod=Pod(uid="u-1", name="train-0", namespace="team-a"),
    devices=(
        Device(type="gpu", name="MI300X", number=2, uuid="g2", path="/dev/dri/renderD130"),
        Device(type="ib", name="mlx5_1", number=1, uuid="guid", path="/dev/infiniband/uverbs1"),
    ),
    created_at=1787486000.25,
    status="Exit",
    exit_code=137,
)


def test_an_event_survives_the_wire() -> None:
    event = ContainerEvent(
        type=EventType.EXITED,
        source=Source.CONTAINERD,
        container=CONTAINER,
        time=1787486864.3,
        exit_code=137,
    )
    record = pb.Record.FromString(
        wire.to_record(event, sequence=7, observed_at=1787486864.5).SerializeToString()
    )
    assert record.sequence == 7
    back = wire.from_event(record.event)
    assert (back.type, back.source, back.exit_code) == (EventType.EXITED, Source.CONTAINERD, 137)
    assert back.time == pytest.approx(event.time, abs=1e-6)
    assert back.container.devices == CONTAINER.devices
    assert (back.container.pod, back.container.name, back.container.status) == (
        CONTAINER.pod,
        "main",
        "Exit",
    )


def test_a_deletion_carries_the_exit_code_of_the_container() -> None:
    event = ContainerEvent(
        type=EventType.DELETED, source=Source.CONTAINERD, container=CONTAINER, time=1.0
    )
    assert wire.from_event(wire.to_record(event, sequence=1, observed_at=1).event).exit_code == 137


def test_an_inventory_survives_the_wire() -> None:
    inventory = Inventory(source=Source.DOCKER, time=5.5, container_ids=("a", "b"))
    record = wire.to_record(inventory, sequence=2, observed_at=6)
    assert wire.from_inventory(record.inventory) == inventory


def test_records_without_a_known_type_or_source_are_refused() -> None:
    with pytest.raises(wire.WireError):
        wire.from_event(pb.ContainerEvent(container_id="x"))
    with pytest.raises(wire.WireError):
        wire.from_inventory(pb.Inventory())
