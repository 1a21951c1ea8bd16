from __future__ import annotations

import dataclasses

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


def _event(kind: EventType, container: Container = CONTAINER, time: float = 1.0) -> ContainerEvent:
    return ContainerEvent(type=kind, source=Source.CONTAINERD, container=container, time=time)


def _through_the_wire(record: pb.Record) -> pb.Record:
    return pb.Record.FromString(record.SerializeToString())


def test_an_event_survives_the_wire() -> None:
    event = dataclasses.replace(_event(EventType.EXITED, time=1787486864.3), exit_code=137)
    record = _through_the_wire(wire.Encoder().record(event, sequence=7, observed_at=1787486864.5))
    assert record.sequence == 7
    assert wire.seconds_of(record.observed_at) == 1787486864.5
    back = wire.Decoder().event(record.event)
    assert (back.type, back.source, back.exit_code) == (EventType.EXITED, Source.CONTAINERD, 137)
    assert back.time == pytest.approx(event.time, abs=1e-6)
    assert back.container.created_at == 1787486000.25
    assert back.container.devices == CONTAINER.devices
    assert (back.container.pod, back.container.name, back.container.status) == (
        CONTAINER.pod,
        "main",
        "Exit",
    )


def test_a_container_without_pod_or_devices_survives_the_wire() -> None:
    bare = dataclasses.replace(CONTAINER, pod=None, devices=(), exit_code=None, status="Running")
    record = _through_the_wire(
        wire.Encoder().record(_event(EventType.STARTED, bare), sequence=1, observed_at=1)
    )
    back = wire.Decoder().event(record.event)
    assert (back.container.pod, back.container.devices, back.exit_code) == (None, (), None)


def test_a_deletion_carries_the_exit_code_of_the_container() -> None:
    record = wire.Encoder().record(_event(EventType.DELETED), sequence=1, observed_at=1)
    assert wire.Decoder().event(record.event).exit_code == 137


def test_a_fraction_that_rounds_to_a_whole_second_makes_a_valid_timestamp() -> None:
    record = wire.Encoder().record(
        _event(EventType.STARTED, time=41.9999999999), sequence=1, observed_at=1
    )
    assert (record.event.time.seconds, record.event.time.nanos) == (42, 0)


def test_the_events_of_a_container_share_one_encoded_and_one_decoded_device_list() -> None:
    encoder, decoder = wire.Encoder(), wire.Decoder()
    started = dataclasses.replace(CONTAINER, status="Running", exit_code=None)
    records = [
        _through_the_wire(encoder.record(_event(kind, container), sequence=n, observed_at=n))
        for n, (kind, container) in enumerate(
            [(EventType.STARTED, started), (EventType.EXITED, CONTAINER)], start=1
        )
    ]
    first, second = (decoder.event(r.event).container.devices for r in records)
    assert first == CONTAINER.devices
    assert first is second
    # The same devices told by another container (or another agent) are the same list too.
    other = dataclasses.replace(CONTAINER, id="77b1", devices=tuple(CONTAINER.devices))
    third = decoder.event(
        _through_the_wire(
            wire.Encoder().record(_event(EventType.CREATED, other), sequence=3, observed_at=3)
        ).event
    )
    assert third.container.devices is first


def test_a_container_whose_devices_change_is_sent_and_read_with_its_new_devices() -> None:
    encoder, decoder = wire.Encoder(capacity=1), wire.Decoder(capacity=1)
    before = CONTAINER
    after = dataclasses.replace(CONTAINER, devices=CONTAINER.devices[:1])
    for container in (before, after, before):
        record = _through_the_wire(
            encoder.record(_event(EventType.STARTED, container), sequence=1, observed_at=1)
        )
        assert decoder.event(record.event).container.devices == container.devices


def test_devices_of_an_unknown_type_are_left_out() -> None:
    record = wire.Encoder().record(_event(EventType.STARTED), sequence=1, observed_at=1)
    record.event.devices.items.add(type=pb.DEVICE_TYPE_UNSPECIFIED, name="x", uuid="y")
    assert wire.Decoder().event(record.event).container.devices == CONTAINER.devices


def test_an_inventory_survives_the_wire() -> None:
    inventory = Inventory(source=Source.DOCKER, time=5.5, container_ids=("a", "b"))
    record = _through_the_wire(wire.Encoder().record(inventory, sequence=2, observed_at=6))
    assert wire.Decoder.inventory(record.inventory) == inventory


def test_records_without_a_known_type_or_source_are_refused() -> None:
    with pytest.raises(wire.WireError, match="without type, source or container id"):
        wire.Decoder().event(pb.ContainerEvent(container_id="x"))
    with pytest.raises(wire.WireError, match="inventory without a source"):
        wire.Decoder.inventory(pb.Inventory())


def test_a_batch_framed_from_encoded_records_reads_as_the_message_it_stands_for() -> None:
    encoder = wire.Encoder()
    records = [
        encoder.record(_event(EventType.STARTED), sequence=1, observed_at=1),
        encoder.record(
            Inventory(source=Source.CONTAINERD, time=2, container_ids=()), sequence=2, observed_at=2
        ),
        pb.Record(sequence=300),  # a record longer than 127 bytes follows
        encoder.record(
            _event(EventType.EXITED, dataclasses.replace(CONTAINER, name="x" * 200)),
            sequence=4,
            observed_at=4,
        ),
    ]
    framed = wire.batch("gpu-node-1", "b1", [r.SerializeToString() for r in records])
    assert pb.EventBatch.FromString(framed) == pb.EventBatch(
        node="gpu-node-1", boot_id="b1", records=records
    )
    assert pb.EventBatch.FromString(wire.batch("n", "b", ())) == pb.EventBatch(
        node="n", boot_id="b"
    )


def test_a_message_that_is_no_batch_is_garbled_not_an_exception() -> None:
    batch = pb.EventBatch(node="n1", boot_id="b1")
    assert wire.parse_batch(batch.SerializeToString()) == batch
    for data in (b"\xff\xff\xff\xff\x0f", b"\x0a\xff\xff\xff\xff\x0f", b"\x12\x05ab"):
        assert wire.parse_batch(data) is wire.GARBLED
