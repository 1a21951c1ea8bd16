"""Container events as lens.v1 protobuf messages and back (lens/proto/lens/v1/events.proto).

The agent's outbox stores records already encoded here; the jobs event server decodes them.
"""

from __future__ import annotations

from google.protobuf import timestamp_pb2

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
_DEVICE_TO_WIRE = {"gpu": pb.DEVICE_TYPE_GPU, "ib": pb.DEVICE_TYPE_RDMA}


class WireError(ValueError):
    """A record the server cannot use (unknown enum, missing body)."""


def stamp(seconds: float) -> timestamp_pb2.Timestamp:
    whole = int(seconds // 1)
    return timestamp_pb2.Timestamp(seconds=whole, nanos=round((seconds - whole) * 1e9))


def seconds_of(value: timestamp_pb2.Timestamp) -> float:
    return value.seconds + value.nanos / 1e9


def to_record(record: Record, *, sequence: int, observed_at: float) -> pb.Record:
    wire = pb.Record(sequence=sequence, observed_at=stamp(observed_at))
    if isinstance(record, Inventory):
        wire.inventory.source = _SOURCE_TO_WIRE[record.source]
        wire.inventory.time.CopyFrom(stamp(record.time))
        wire.inventory.container_ids.extend(record.container_ids)
    else:
        _fill_event(wire.event, record)
    return wire


def _fill_event(wire: pb.ContainerEvent, event: ContainerEvent) -> None:
    container = event.container
    wire.type = _TYPE_TO_WIRE[event.type]
    wire.source = _SOURCE_TO_WIRE[event.source]
    wire.container_id = container.id
    wire.container_name = container.name
    if container.pod is not None:
        wire.pod.uid = container.pod.uid
        wire.pod.name = container.pod.name
        wire.pod.namespace = container.pod.namespace
    for device in container.devices:
        wire.devices.add(
            type=_DEVICE_TO_WIRE[device.type],
            name=device.name,
            number=device.number,
            uuid=device.uuid,
            path=device.path,
        )
    wire.time.CopyFrom(stamp(event.time))
    wire.created_at.CopyFrom(stamp(container.created_at))
    # Events after the exit (deletion, a resync) carry the container's exit code too.
    exit_code = event.exit_code if event.exit_code is not None else container.exit_code
    if exit_code is not None:
        wire.exit_code = exit_code
    wire.status = container.status


def from_event(wire: pb.ContainerEvent) -> ContainerEvent:
    """The event a record carries; WireError when it names an unknown type or source."""
    kind = _TYPE_FROM_WIRE.get(wire.type)
    source = _SOURCE_FROM_WIRE.get(wire.source)
    if kind is None or source is None or not wire.container_id:
        raise WireError(
            f"event without type, source or container id (type {wire.type}, source {wire.source})"
        )
    devices = tuple(
        Device(
            type="gpu" if d.type == pb.DEVICE_TYPE_GPU else "ib",
            name=d.name,
            number=d.number,
            uuid=d.uuid,
            path=d.path,
        )
        for d in wire.devices
        if d.type in (pb.DEVICE_TYPE_GPU, pb.DEVICE_TYPE_RDMA)
    )
    pod = None
    if wire.HasField("pod"):
        pod = Pod(uid=wire.pod.uid, name=wire.pod.name, namespace=wire.pod.namespace)
    exit_code = wire.exit_code if wire.HasField("exit_code") else None
    container = Container(
        id=wire.container_id,
        name=wire.container_name or wire.container_id,
        pod=pod,
        devices=devices,
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


def from_inventory(wire: pb.Inventory) -> Inventory:
    source = _SOURCE_FROM_WIRE.get(wire.source)
    if source is None:
        raise WireError(f"inventory without a source ({wire.source})")
    return Inventory(
        source=source, time=seconds_of(wire.time), container_ids=tuple(wire.container_ids)
    )
