"""Container events as lens.v1 protobuf messages and back (lens/proto/lens/v1/events.proto).

The agent's outbox stores records already encoded here; the jobs event server decodes them.
Both hold records to what the store can write (times in years 1000 to 9999, sequences of a
signed 64-bit column, texts that fit their columns without NUL characters): the encoder makes
every record fit, and the decoder refuses one that does not as a WireError.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from google.protobuf import message

from lens.containers.model import (
    Container,
    ContainerEvent,
    Device,
    DeviceType,
    EventType,
    Inventory,
    Pod,
    Record,
    Source,
)
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.runtime.wirevalues import (
    MAX_TIME,
    MIN_TIME,
    WireError,
    seconds_of,
    usable_text,
    usable_time,
)
from lens.runtime.wirevalues import checked_text as _text
from lens.runtime.wirevalues import checked_time as _time_of
from lens.runtime.wirevalues import set_time as _set_time

__all__ = [
    "MAX_TIME",
    "MIN_TIME",
    "WireError",
    "seconds_of",
    "usable_text",
    "usable_time",
]

_SOURCE_TO_WIRE = {Source.CONTAINERD: pb.SOURCE_CONTAINERD, Source.DOCKER: pb.SOURCE_DOCKER}
_SOURCE_FROM_WIRE = {v: k for k, v in _SOURCE_TO_WIRE.items()}
_TYPE_TO_WIRE = {
    EventType.CREATED: pb.EVENT_TYPE_CREATED,
    EventType.STARTED: pb.EVENT_TYPE_STARTED,
    EventType.EXITED: pb.EVENT_TYPE_EXITED,
    EventType.OOM_KILLED: pb.EVENT_TYPE_OOM_KILLED,
    EventType.DELETED: pb.EVENT_TYPE_DELETED,
    EventType.OBSERVED: pb.EVENT_TYPE_OBSERVED,
}
_TYPE_FROM_WIRE = {v: k for k, v in _TYPE_TO_WIRE.items()}
_DEVICE_TO_WIRE: dict[DeviceType, pb.DeviceType] = {
    "gpu": pb.DEVICE_TYPE_GPU,
    "ib": pb.DEVICE_TYPE_RDMA,
}
_DEVICE_FROM_WIRE: dict[int, DeviceType] = {v: k for k, v in _DEVICE_TO_WIRE.items()}


# event_streams.committed_sequence is a signed 64-bit column; the wire's sequence is unsigned.
MAX_SEQUENCE = 2**63 - 1

# The store's column sizes (lens/store/models/containers.py; tests/containers/test_wire.py
# checks that they agree): PostgreSQL and MariaDB refuse a longer text, PostgreSQL any NUL.
NODE_CHARS = 253
BOOT_ID_CHARS = 64
CONTAINER_ID_CHARS = 128
NAME_CHARS = 253
POD_UID_CHARS = 64
NAMESPACE_CHARS = 64
STATUS_CHARS = 32
DEVICE_CHARS = 128  # a device's name and its uuid


# EventBatch.records (field 3, length-delimited): its tag byte on the wire.
_RECORDS_TAG = bytes([3 << 3 | 2])


@dataclasses.dataclass(frozen=True, slots=True)
class Garbled:
    """A message the server cannot take as a lens.v1 EventBatch (what its deserializer gives
    instead of raising, so a bad message is answered INVALID_ARGUMENT and counted by reason)."""

    reason: str


GARBLED = Garbled("not a lens.v1 EventBatch")
# A batch whose node name or boot id the store cannot hold: none of its records can be
# committed under them, nor their sequence acknowledged.
UNUSABLE_AGENT = Garbled("node name or boot id unusable")


def parse_batch(data: bytes) -> pb.EventBatch | Garbled:
    """An EventBatch from a gRPC message's bytes; a Garbled for anything else (never raises)."""
    try:
        batch = pb.EventBatch.FromString(data)
    except (message.DecodeError, ValueError, RecursionError):
        return GARBLED
    try:
        _text(batch.node, NODE_CHARS, "node")
        _text(batch.boot_id, BOOT_ID_CHARS, "boot_id")
    except WireError:
        return UNUSABLE_AGENT
    return batch


def batch(node: str, boot_id: str, records: Sequence[bytes]) -> bytes:
    """An EventBatch on the wire, from records already encoded (as the outbox keeps them).

    Framing the records' bytes costs a fraction of copying each record into a new message and
    encoding it again (a whole-node record carries 16 devices)."""
    parts = [pb.EventBatch(node=node, boot_id=boot_id).SerializeToString()]
    for record in records:
        parts.append(_RECORDS_TAG)
        parts.append(_varint(len(record)))
        parts.append(record)
    return b"".join(parts)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class Encoder:
    """Encodes records, the device list of a container once for all its events.

    A container's events share its devices tuple (tracking.py replaces the container, not its
    devices), so the encoded list is kept by the tuple's identity: the entry holds the tuple, so
    its id cannot be reused while the entry lives. Safe to use from several threads.

    What the store could not hold is made to fit (usable_time, usable_text; an int32 field's
    value wrapped as C would), so that the server never has to skip a record of this agent's.
    """

    def __init__(self, capacity: int = 1024) -> None:
        self._capacity = capacity
        self._devices: dict[int, tuple[tuple[Device, ...], pb.DeviceList]] = {}

    def record(self, record: Record, *, sequence: int, observed_at: float) -> pb.Record:
        """`record` on the wire; WireError for a sequence outside 0 to MAX_SEQUENCE."""
        if not 0 <= sequence <= MAX_SEQUENCE:
            raise WireError("sequence out of range", str(sequence))
        wire = pb.Record(sequence=sequence)
        stamp(wire, observed_at=observed_at)
        if isinstance(record, Inventory):
            wire.inventory.source = _SOURCE_TO_WIRE[record.source]
            _set_time(wire.inventory.time, usable_time(record.time))
            wire.inventory.container_ids.extend(
                usable_text(cid, CONTAINER_ID_CHARS) for cid in record.container_ids
            )
        else:
            self._fill_event(wire.event, record)
        return wire

    def _fill_event(self, wire: pb.ContainerEvent, event: ContainerEvent) -> None:
        container = event.container
        wire.type = _TYPE_TO_WIRE[event.type]
        wire.source = _SOURCE_TO_WIRE[event.source]
        wire.container_id = usable_text(container.id, CONTAINER_ID_CHARS)
        wire.container_name = usable_text(container.name, NAME_CHARS)
        if container.pod is not None:
            wire.pod.uid = usable_text(container.pod.uid, POD_UID_CHARS)
            wire.pod.name = usable_text(container.pod.name, NAME_CHARS)
            wire.pod.namespace = usable_text(container.pod.namespace, NAMESPACE_CHARS)
        if container.devices:
            wire.devices.CopyFrom(self._device_list(container.devices))
        _set_time(wire.time, usable_time(event.time))
        _set_time(wire.created_at, usable_time(container.created_at))
        # Events after the exit (deletion, a resync) carry the container's exit code too.
        exit_code = event.exit_code if event.exit_code is not None else container.exit_code
        if exit_code is not None:
            wire.exit_code = _int32(exit_code)
        wire.status = usable_text(container.status, STATUS_CHARS)

    def _device_list(self, devices: tuple[Device, ...]) -> pb.DeviceList:
        cached = self._devices.get(id(devices))
        if cached is not None and cached[0] is devices:
            return cached[1]
        encoded = pb.DeviceList(
            items=[
                pb.Device(
                    type=_DEVICE_TO_WIRE[d.type],
                    name=usable_text(d.name, DEVICE_CHARS),
                    number=_int32(d.number),
                    uuid=usable_text(d.uuid, DEVICE_CHARS),
                    path=usable_text(d.path),
                )
                for d in devices
            ]
        )
        if len(self._devices) >= self._capacity:
            self._devices.clear()
        self._devices[id(devices)] = (devices, encoded)
        return encoded


def stamp(record: pb.Record, *, observed_at: float) -> None:
    """Set when the agent recorded `record` (what the store can hold of it)."""
    _set_time(record.observed_at, usable_time(observed_at))


def _int32(value: int) -> int:
    """`value` as a signed 32-bit integer, wrapped as C would (containerd's exit status is
    unsigned: 4294967295 is -1)."""
    return (value + 2**31) % 2**32 - 2**31


class Decoder:
    """Decodes records; the device lists a node's events repeat are decoded once and shared.

    A list is known by its encoded bytes (one call into the protobuf runtime), so whatever sent
    it, equal lists become the same tuple. Not thread-safe: one per event loop.
    """

    def __init__(self, capacity: int = 4096) -> None:
        self._capacity = capacity
        self._devices: dict[bytes, tuple[Device, ...]] = {}

    def record(self, wire: pb.Record) -> Record:
        """The event or inventory a record carries; WireError when the store cannot hold it."""
        if wire.sequence > MAX_SEQUENCE:
            raise WireError("sequence out of range", str(wire.sequence))
        body = wire.WhichOneof("body")
        if body == "event":
            return self.event(wire.event)
        if body == "inventory":
            return self.inventory(wire.inventory)
        raise WireError("record without a body")

    def event(self, wire: pb.ContainerEvent) -> ContainerEvent:
        """The event a record carries; WireError when it names an unknown type or source, or
        holds a time or text the store cannot."""
        kind = _TYPE_FROM_WIRE.get(wire.type)
        source = _SOURCE_FROM_WIRE.get(wire.source)
        if kind is None or source is None or not wire.container_id:
            raise WireError(
                "event without type, source or container id",
                f"type {wire.type}, source {wire.source}",
            )
        pod = None
        if wire.HasField("pod"):
            pod = Pod(
                uid=_text(wire.pod.uid, POD_UID_CHARS, "pod.uid"),
                name=_text(wire.pod.name, NAME_CHARS, "pod.name"),
                namespace=_text(wire.pod.namespace, NAMESPACE_CHARS, "pod.namespace"),
            )
        exit_code = wire.exit_code if wire.HasField("exit_code") else None
        container_id = _text(wire.container_id, CONTAINER_ID_CHARS, "container_id")
        container = Container(
            id=container_id,
            name=_text(wire.container_name, NAME_CHARS, "container_name") or container_id,
            pod=pod,
            devices=self._device_tuple(wire.devices),
            created_at=_time_of(wire.created_at, "created_at"),
            status=_text(wire.status, STATUS_CHARS, "status"),
            exit_code=exit_code,
        )
        return ContainerEvent(
            type=kind,
            source=source,
            container=container,
            time=_time_of(wire.time, "time"),
            exit_code=exit_code,
        )

    @staticmethod
    def inventory(wire: pb.Inventory) -> Inventory:
        source = _SOURCE_FROM_WIRE.get(wire.source)
        if source is None:
            raise WireError("inventory without a source", str(wire.source))
        return Inventory(
            source=source,
            time=_time_of(wire.time, "inventory.time"),
            container_ids=tuple(wire.container_ids),
        )

    def _device_tuple(self, wire: pb.DeviceList) -> tuple[Device, ...]:
        key = wire.SerializeToString()
        devices = self._devices.get(key)
        if devices is None:
            devices = tuple(
                Device(
                    type=_DEVICE_FROM_WIRE[d.type],
                    name=_text(d.name, DEVICE_CHARS, "device.name"),
                    number=d.number,
                    uuid=_text(d.uuid, DEVICE_CHARS, "device.uuid"),
                    path=d.path,
                )
                for d in wire.items
                if d.type in _DEVICE_FROM_WIRE
            )
            if len(self._devices) >= self._capacity:
                self._devices.clear()
            self._devices[key] = devices
        return devices
