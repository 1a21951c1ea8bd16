from __future__ import annotations

import dataclasses
from typing import Any, cast

import peewee
import pytest
from google.protobuf import timestamp_pb2
from google.protobuf.message import Message
from hypothesis import given
from hypothesis import strategies as st

from lens.containers import wire
from lens.containers.model import (
    Container,
    ContainerEvent,
    Device,
    EventType,
    Inventory,
    Pod,
    Record,
    Source,
)
from lens.containers.server import recording
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.store import models

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


# --- what the store can hold (issue 16, point 6) ----------------------------------------------

PAST_9999 = 253_402_300_800  # 10000-01-01T00:00:00Z
Strategy = st.SearchStrategy[Any]


def _started(sequence: int = 1) -> pb.Record:
    return wire.Encoder().record(_event(EventType.STARTED), sequence=sequence, observed_at=1)


def test_the_text_limits_are_the_stores_column_sizes() -> None:
    fields = {
        wire.NODE_CHARS: [models.EventStream.node_name, models.NodeContainer.node_name],
        wire.BOOT_ID_CHARS: [models.EventStream.boot_id],
        wire.CONTAINER_ID_CHARS: [
            models.NodeContainer.container_id,
            models.NodeContainerDevice.container_id,
            models.NodeContainerEvent.container_id,
        ],
        wire.NAME_CHARS: [models.NodeContainer.container_name, models.NodeContainer.pod_name],
        wire.POD_UID_CHARS: [models.NodeContainer.pod_uid],
        wire.NAMESPACE_CHARS: [models.NodeContainer.pod_namespace],
        wire.STATUS_CHARS: [models.NodeContainer.status],
        wire.DEVICE_CHARS: [
            models.NodeContainerDevice.device_name,
            models.NodeContainerDevice.device_uuid,
        ],
    }
    for limit, columns in fields.items():
        assert [c.max_length for c in columns] == [limit] * len(columns)


@pytest.mark.parametrize(
    ("seconds", "nanos"),
    [(PAST_9999, 0), (PAST_9999 - 1, 999_999_999), (2**63 - 1, 0), (-30_610_224_001, 0)],
)
@pytest.mark.parametrize("field", ["time", "created_at", "inventory"])
def test_a_time_the_store_cannot_hold_makes_the_record_unusable(
    field: str, seconds: int, nanos: int
) -> None:
    # Issue 16, point 6: a time past year 9999 reached the database and failed the batch.
    if field == "inventory":
        record = wire.Encoder().record(
            Inventory(source=Source.DOCKER, time=1.0, container_ids=()), sequence=1, observed_at=1
        )
        stamp = record.inventory.time
    else:
        record = _started()
        stamp = getattr(record.event, field)
    stamp.seconds, stamp.nanos = seconds, nanos
    with pytest.raises(wire.WireError) as refused:
        wire.Decoder().record(record)
    assert refused.value.reason == "time out of range"


def test_the_first_and_last_times_the_store_holds_are_usable() -> None:
    record = _started()
    record.event.time.seconds = -30_610_224_000  # 1000-01-01
    record.event.created_at.seconds, record.event.created_at.nanos = PAST_9999 - 1, 999_000_000
    event = wire.Decoder().record(record)
    assert isinstance(event, ContainerEvent)
    assert recording.at(event.time).year == 1000
    assert recording.at(event.container.created_at).year == 9999


def test_a_sequence_past_a_signed_64_bit_column_makes_the_record_unusable() -> None:
    assert isinstance(wire.Decoder().record(_started(2**63 - 1)), ContainerEvent)
    with pytest.raises(wire.WireError) as refused:
        wire.Decoder().record(_started(2**63))
    assert refused.value.reason == "sequence out of range"


@pytest.mark.parametrize(
    ("path", "limit"),
    [
        ("container_id", wire.CONTAINER_ID_CHARS),
        ("container_name", wire.NAME_CHARS),
        ("status", wire.STATUS_CHARS),
        ("pod.uid", wire.POD_UID_CHARS),
        ("pod.name", wire.NAME_CHARS),
        ("pod.namespace", wire.NAMESPACE_CHARS),
        ("devices.items.name", wire.DEVICE_CHARS),
        ("devices.items.uuid", wire.DEVICE_CHARS),
    ],
)
def test_a_text_too_long_or_with_a_nul_makes_the_record_unusable(path: str, limit: int) -> None:
    def with_text(text: str) -> pb.Record:
        record = _started()
        *parents, name = path.split(".")
        target: object = record.event
        for parent in parents:
            target = getattr(target, parent)
            if parent == "items":
                target = target[0]  # type: ignore[index]
        setattr(target, name, text)
        return record

    assert wire.Decoder().record(with_text("é" * limit))  # characters, not bytes
    for text, reason in (
        ("x" * (limit + 1), "text too long"),
        ("a\0b", "text with a NUL character"),
    ):
        with pytest.raises(wire.WireError) as refused:
            wire.Decoder().record(with_text(text))
        assert refused.value.reason == reason
        assert path.split(".")[-1] in str(refused.value)


def test_a_record_without_a_body_is_unusable() -> None:
    with pytest.raises(wire.WireError) as refused:
        wire.Decoder().record(pb.Record(sequence=1))
    assert refused.value.reason == "record without a body"


def test_a_batch_whose_node_or_boot_id_the_store_cannot_hold_is_garbled() -> None:
    for node, boot_id in (("n" * 254, "b"), ("n", "b" * 65), ("n\0", "b"), ("n", "\0")):
        data = pb.EventBatch(node=node, boot_id=boot_id).SerializeToString()
        assert wire.parse_batch(data) is wire.UNUSABLE_AGENT
    fits = pb.EventBatch(node="n" * 253, boot_id="b" * 64)
    assert wire.parse_batch(fits.SerializeToString()) == fits


def test_the_encoder_makes_what_the_store_cannot_hold_fit() -> None:
    # "The agent never sends one": times, texts and codes are brought into range, not refused.
    container = dataclasses.replace(
        CONTAINER,
        id="c" * 200,
        name="a\0b",
        status="s" * 40,
        created_at=float("nan"),
        exit_code=2**32 - 1,
        devices=(Device(type="gpu", name="g" * 200, number=2**31, uuid="u\ud800", path="\ud800"),),
    )
    event = ContainerEvent(
        type=EventType.EXITED, source=Source.DOCKER, container=container, time=1e300
    )
    record = _through_the_wire(wire.Encoder().record(event, sequence=1, observed_at=float("inf")))
    back = wire.Decoder().record(record)
    assert isinstance(back, ContainerEvent)
    assert back.container.id == "c" * wire.CONTAINER_ID_CHARS
    assert (back.container.name, back.container.status) == ("ab", "s" * wire.STATUS_CHARS)
    assert (back.time, back.container.created_at) == (wire.MAX_TIME - 1, 0.0)
    assert back.exit_code == -1  # containerd's unsigned exit status, as C reads it
    device = back.container.devices[0]
    assert (device.name, device.number, device.uuid) == ("g" * 128, -(2**31), "u?")
    assert wire.seconds_of(record.observed_at) == wire.MAX_TIME - 1
    inventory = Inventory(source=Source.DOCKER, time=-1e300, container_ids=("x" * 200,))
    record = wire.Encoder().record(inventory, sequence=2, observed_at=1)
    assert wire.Decoder().record(record) == Inventory(
        source=Source.DOCKER, time=wire.MIN_TIME, container_ids=("x" * 128,)
    )


def test_the_encoder_refuses_a_sequence_the_store_cannot_hold() -> None:
    with pytest.raises(wire.WireError, match="sequence out of range"):
        wire.Encoder().record(_event(EventType.STARTED), sequence=2**63, observed_at=1)


# --- properties -------------------------------------------------------------------------------

_INT32 = st.integers(-(2**31), 2**31 - 1)
_GOOD_TEXTS = st.text(st.characters(codec="utf-8", exclude_characters="\0"), max_size=20)
_BAD_TEXTS = st.one_of(st.text(min_size=30, max_size=300), st.text("a\0", max_size=4))
_GOOD_STAMPS = st.builds(
    timestamp_pb2.Timestamp, seconds=st.integers(0, 2_000_000_000), nanos=st.integers(0, 10**9 - 1)
)
_BAD_STAMPS = st.builds(
    timestamp_pb2.Timestamp,
    seconds=st.one_of(
        st.sampled_from([int(wire.MIN_TIME) - 1, int(wire.MIN_TIME), PAST_9999 - 1, PAST_9999]),
        st.integers(PAST_9999, 2**63 - 1),
        st.integers(-(2**63), int(wire.MIN_TIME) - 1),
    ),
    nanos=_INT32,
)


def _fill(draw: st.DrawFn, record: pb.Record, *, texts: Strategy, stamps: Strategy) -> None:
    """Give `record` an event or an inventory, its texts and times drawn from those given."""
    record.observed_at.CopyFrom(draw(stamps))
    if draw(st.booleans()):
        record.inventory.source = cast(pb.Source, draw(st.integers(1, 2)))
        record.inventory.time.CopyFrom(draw(stamps))
        record.inventory.container_ids.extend(draw(st.lists(texts, max_size=3)))
        return
    event = record.event
    event.type = cast(pb.EventType, draw(st.integers(1, 6)))
    event.source = cast(pb.Source, draw(st.integers(1, 2)))
    event.container_id = draw(texts.filter(bool))
    event.container_name, event.status = draw(texts), draw(texts)
    if draw(st.booleans()):
        event.pod.uid, event.pod.name, event.pod.namespace = (draw(texts) for _ in "abc")
    for _ in range(draw(st.integers(0, 3))):
        event.devices.items.add(
            type=draw(st.integers(1, 2)),
            name=draw(texts),
            number=draw(_INT32),
            uuid=draw(texts),
            path=draw(texts),
        )
    event.time.CopyFrom(draw(stamps))
    event.created_at.CopyFrom(draw(stamps))
    if draw(st.booleans()):
        event.exit_code = draw(_INT32)


def _parts(record: pb.Record) -> tuple[list[tuple[Message, str]], list[Message]]:
    """The (message, field) pairs of `record`'s texts, and its timestamps."""
    if record.HasField("inventory"):
        return [], [record.observed_at, record.inventory.time]
    event = record.event
    texts: list[tuple[Message, str]] = [(event, n) for n in ("container_id", "container_name")]
    texts += [(event, "status")] + [(event.pod, n) for n in ("uid", "name", "namespace")]
    texts += [(device, name) for device in event.devices.items for name in ("name", "uuid")]
    return texts, [record.observed_at, event.time, event.created_at]


@st.composite
def wire_records(draw: st.DrawFn) -> pb.Record:
    """Any lens.v1 Record: a usable one with at most one fault (a sequence, time or text the
    store cannot hold, an unknown enum, no body), or one with anything anywhere."""
    fault = draw(st.sampled_from([None, "sequence", "time", "text", "enum", "body", "chaos"]))
    record = pb.Record(sequence=draw(st.integers(0, 100)))
    if fault == "chaos":
        _fill(draw, record, texts=_GOOD_TEXTS | _BAD_TEXTS, stamps=_GOOD_STAMPS | _BAD_STAMPS)
        record.sequence = draw(st.integers(0, 2**64 - 1))
    else:
        _fill(draw, record, texts=_GOOD_TEXTS, stamps=_GOOD_STAMPS)
    texts, stamps = _parts(record)
    if fault == "sequence":
        record.sequence = draw(st.integers(2**63 - 1, 2**64 - 1))
    elif fault == "time":
        draw(st.sampled_from(stamps)).CopyFrom(draw(_BAD_STAMPS))
    elif fault == "text" and texts:
        message, field = draw(st.sampled_from(texts))
        setattr(message, field, draw(_BAD_TEXTS))
    elif fault == "enum":
        enums: list[tuple[Message, str]] = [(record.event, "type"), (record.event, "source")]
        if record.HasField("inventory"):
            enums = [(record.inventory, "source")]
        message, field = draw(st.sampled_from(enums))
        setattr(message, field, draw(st.integers(-1, 7)))
    elif fault == "body":
        record.ClearField(draw(st.sampled_from(["event", "inventory"])))
    return record


def _fits(value: object, column: peewee.Field) -> bool:
    if isinstance(column, peewee.CharField):
        return isinstance(value, str) and len(value) <= column.max_length and "\0" not in value
    return True


@given(wire_records())
def test_any_record_decodes_to_rows_the_store_holds_or_is_unusable(record: pb.Record) -> None:
    """lens.v1 records to rows: a WireError, or rows whose every text fits its column and every
    time is a datetime (nothing else raised)."""
    try:
        decoded = wire.Decoder().record(pb.Record.FromString(record.SerializeToString()))
    except wire.WireError as exc:
        assert exc.reason in str(exc)
        return
    assert record.sequence < 2**63
    if isinstance(decoded, Inventory):
        assert recording.at(decoded.time).year >= 1000
        return
    tables = [
        (
            models.NodeContainer,
            recording.CONTAINER_COLUMNS,
            [recording.container_row("c", "n", decoded)],
        ),
        (models.NodeContainerDevice, recording.DEVICE_COLUMNS, recording.device_rows("c", decoded)),
    ]
    if decoded.type is not EventType.OBSERVED:
        tables.append(
            (
                models.NodeContainerEvent,
                recording.EVENT_COLUMNS,
                [recording.event_row("c", decoded)],
            )
        )
    for model, columns, rows in tables:
        for row in rows:
            for name, value in zip(columns, row, strict=True):
                assert _fits(value, model._meta.fields[name]), (model.__name__, name, value)


@given(
    kind=st.sampled_from(EventType),
    source=st.sampled_from(Source),
    texts=st.lists(st.text(), min_size=8, max_size=8),
    container_id=st.text(st.characters(exclude_characters="\0"), min_size=1),
    times=st.lists(st.floats(), min_size=4, max_size=4),
    codes=st.lists(st.integers(), min_size=2, max_size=2),
)
def test_whatever_the_agent_encodes_the_server_can_use(
    kind: EventType,
    source: Source,
    texts: list[str],
    container_id: str,
    times: list[float],
    codes: list[int],
) -> None:
    """The agent never sends a record the server would skip (a container always has an id)."""
    device = Device(type="gpu", name=texts[0], number=codes[0], uuid=texts[1], path=texts[2])
    container = Container(
        id=container_id,
        name=texts[3],
        pod=Pod(uid=texts[4], name=texts[5], namespace=texts[6]),
        devices=(device,),
        created_at=times[0],
        status=texts[7],
        exit_code=codes[1],
    )
    event = ContainerEvent(type=kind, source=source, container=container, time=times[1])
    inventory = Inventory(source=source, time=times[2], container_ids=tuple(texts))
    encoder, decoder = wire.Encoder(), wire.Decoder()
    records: tuple[Record, ...] = (event, inventory)
    for sequence, record in enumerate(records, start=1):
        encoded = encoder.record(record, sequence=sequence, observed_at=times[3])
        decoded = decoder.record(pb.Record.FromString(encoded.SerializeToString()))
        assert type(decoded) is type(record)
