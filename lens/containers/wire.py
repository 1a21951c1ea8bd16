"""Container events as lens.v1 protobuf messages and back (lens/proto/lens/v1/events.proto).

The agent's outbox stores records already encoded here; the jobs event server decodes them.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf import message, timestamp_pb2

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


class WireError(ValueError):
    """A record the server cannot use (unknown enum, missing body)."""


def _set_time(field: timestamp_pb2.Timestamp, seconds: float) -> None:
    whole = int(seconds // 1)
    nanos = round((seconds - whole) * 1e9)
    if nanos >= 1_000_000_000:  # a fraction that rounds up to the next second
        whole, nanos = whole + 1, nanos - 1_000_000_000
    field.seconds = whole
    field.nanos = nanos


def seconds_of(value: timestamp_pb2.Timestamp) -> float:
    return value.seconds + value.nanos / 1e9


# EventBatch.records (field 3, length-delimited): its tag byte on the wire.
_RECORDS_TAG = bytes([3 << 3 | 2])


class Garbled:
    """A message that is not a lens.v1 EventBatch (what the server's deserializer gives
    instead of raising, so a bad message is answered INVALID_ARGUMENT and counted)."""

    reason = "not a lens.v1 EventBatch"


GARBLED = Garbled()


def parse_batch(data: bytes) -> pb.EventBatch | Garbled:
    """An EventBatch from a gRPC message's bytes; GARBLED for anything else (never raises)."""
    try:
        return pb.EventBatch.FromString(data)
    except (message.DecodeError, ValueError, RecursionError):
        return GARBLED


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
    """

    def __init__(self, capacity: int = 1024) -> None:
        self._capacity = capacity
        self._devices: dict[int, tuple[tuple[Device, ...], pb.DeviceList]] = {}

    def record(self, record: Record, *, sequence: int, observed_at: float) -> pb.Record:
        wire = pb.Record(sequence=sequence)
        _set_time(wire.observed_at, observed_at)
        if isinstance(record, Inventory):
            wire.inventory.source = _SOURCE_TO_WIRE[record.source]
            _set_time(wire.inventory.time, record.time)
            wire.inventory.container_ids.extend(record.container_ids)
        else:
            self._fill_event(wire.event, record)
        return wire

    def _fill_event(self, wire: pb.ContainerEvent, event: ContainerEvent) -> None:
        container = event.container
        wire.type = _TYPE_TO_WIRE[event.type]
        wire.source = _SOURCE_TO_WIRE[event.source]
        wire.container_id = container.id
        wire.container_name = container.name
        if container.pod is not None:
            wire.pod.uid = container.pod.uid
            wire.pod.name = container.pod.name
            wire.pod.namespace = container.pod.namespace
        if container.devices:
            wire.devices.CopyFrom(self._device_list(container.devices))
        _set_time(wire.time, event.time)
        _set_time(wire.created_at, container.created_at)
        # Events after the exit (deletion, a resync) carry the container's exit code too.
        exit_code = event.exit_code if event.exit_code is not None else container.exit_code
        if exit_code is not None:
            wire.exit_code = exit_code
        wire.status = container.status

    def _device_list(self, devices: tuple[Device, ...]) -> pb.DeviceList:
        cached = self._devices.get(id(devices))
        if cached is not None and cached[0] is devices:
            return cached[1]
        encoded = pb.DeviceList(
            items=[
                pb.Device(
                    type=_DEVICE_TO_WIRE[d.type],
                    name=d.name,
                    number=d.number,
                    uuid=d.uuid,
                    path=d.path,
                )
                for d in devices
            ]
        )
        if len(self._devices) >= self._capacity:
            self._devices.clear()
        self._devices[id(devices)] = (devices, encoded)
        return encoded


class Decoder:
    """Decodes records; the device lists a node's events repeat are decoded once and shared.

    A list is known by its encoded bytes (one call into the protobuf runtime), so whatever sent
    it, equal lists become the same tuple. Not thread-safe: one per event loop.
    """

    def __init__(self, capacity: int = 4096) -> None:
        self._capacity = capacity
        self._devices: dict[bytes, tuple[Device, ...]] = {}

    def event(self, wire: pb.ContainerEvent) -> ContainerEvent:
        """The event a record carries; WireError when it names an unknown type or source."""
        kind = _TYPE_FROM_WIRE.get(wire.type)
        source = _SOURCE_FROM_WIRE.get(wire.source)
        if kind is None or source is None or not wire.container_id:
            raise WireError(
                f"event without type, source or container id (type {wire.type}, "
                f"source {wire.source})"
            )
        pod = None
        if wire.HasField("pod"):
            pod = Pod(uid=wire.pod.uid, name=wire.pod.name, namespace=wire.pod.namespace)
        exit_code = wire.exit_code if wire.HasField("exit_code") else None
        container = Container(
            id=wire.container_id,
            name=wire.container_name or wire.container_id,
            pod=pod,
            devices=self._device_tuple(wire.devices),
            created_at=seconds_of(wire.created_at),
            status=wire.status,
            exit_code=exit_code,
        )
        return ContainerEvent(
            type=kind,
            source=source,
            container=container,
            time=seconds_of(wire.time),
            exit_code=exit_code,
        )

    @staticmethod
    def inventory(wire: pb.Inventory) -> Inventory:
        source = _SOURCE_FROM_WIRE.get(wire.source)
        if source is None:
            raise WireError(f"inventory without a source ({wire.source})")
        return Inventory(
            source=source, time=seconds_of(wire.time), container_ids=tuple(wire.container_ids)
        )

    def _device_tuple(self, wire: pb.DeviceList) -> tuple[Device, ...]:
        key = wire.SerializeToString()
        devices = self._devices.get(key)
        if devices is None:
            devices = tuple(
                Device(
                    type=_DEVICE_FROM_WIRE[d.type],
                    name=d.name,
                    number=d.number,
                    uuid=d.uuid,
                    path=d.path,
                )
                for d in wire.items
                if d.type in _DEVICE_FROM_WIRE
            )
            if len(self._devices) >= self._capacity:
                self._devices.clear()
            self._devices[key] = devices
        return devices
