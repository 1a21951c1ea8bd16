"""containerd's gRPC API: containers, tasks, the event stream and CRI's statuses, as records.

The boundary to containerd (shared/formats/containerd.md): nothing above this module sees gRPC
or protobuf. tracking.py turns the records and events into Lens containers and events;
watching.py drives the subscription. Stubs come from lens/proto/containerd and lens/proto/cri
(vendored protos); the CRI plugin serves its API on containerd's own socket.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping

import grpc
from google.protobuf import any_pb2, timestamp_pb2
from google.protobuf.message import DecodeError, Message

from lens.containers.node.records import ContainerRecord, RuntimeEvent, RuntimeStatus, TaskRecord
from lens.containers.node.watching import MALFORMED, Skipped
from lens.proto._generated.containerd.events import container_pb2, task_pb2
from lens.proto._generated.containerd.services.containers.v1 import (
    containers_pb2,
    containers_pb2_grpc,
)
from lens.proto._generated.containerd.services.events.v1 import events_pb2, events_pb2_grpc
from lens.proto._generated.containerd.services.tasks.v1 import tasks_pb2, tasks_pb2_grpc
from lens.proto._generated.containerd.types.task import task_pb2 as task_types_pb2
from lens.proto._generated.cri.runtime.v1 import api_pb2 as cri_pb2
from lens.proto._generated.cri.runtime.v1 import api_pb2_grpc as cri_pb2_grpc
from lens.runtime import errors

log = logging.getLogger(__name__)

NAMESPACE_HEADER = "containerd-namespace"

# Topics the tracker acts on, and the event message each carries.
TOPIC_MESSAGES: Mapping[str, type[Message]] = {
    "/containers/create": container_pb2.ContainerCreate,
    "/containers/delete": container_pb2.ContainerDelete,
    "/tasks/create": task_pb2.TaskCreate,
    "/tasks/start": task_pb2.TaskStart,
    "/tasks/exit": task_pb2.TaskExit,
    "/tasks/oom": task_pb2.TaskOOM,
    "/tasks/delete": task_pb2.TaskDelete,
}
_TASK_STATUS = {
    task_types_pb2.CREATED: "created",
    task_types_pb2.RUNNING: "running",
    task_types_pb2.STOPPED: "stopped",
    task_types_pb2.PAUSED: "paused",
    task_types_pb2.PAUSING: "paused",
}
_CRI_STATE = {
    cri_pb2.CONTAINER_CREATED: "created",
    cri_pb2.CONTAINER_RUNNING: "running",
    cri_pb2.CONTAINER_EXITED: "exited",
}


def seconds(stamp: timestamp_pb2.Timestamp) -> float | None:
    """A protobuf Timestamp as epoch seconds; None for the zero time (unset) or one before it
    (which no runtime writes)."""
    value = float(stamp.seconds) + stamp.nanos / 1e9
    return value if value > 0 else None


def nanoseconds(stamp: int) -> float | None:
    """CRI's epoch nanoseconds as epoch seconds, the same float `seconds` makes of the event's
    Timestamp it was taken from (so an exit read from CRI repeats the one told, not a second
    one); None for 0 (unset) or less."""
    if stamp <= 0:
        return None
    whole, nanos = divmod(stamp, 1_000_000_000)
    return float(whole) + nanos / 1e9


def parse_envelope(envelope: events_pb2.Envelope) -> RuntimeEvent | None:
    """The event in an envelope, or None for topics the tracker does not act on."""
    message_type = TOPIC_MESSAGES.get(envelope.topic)
    if message_type is None:
        return None
    message = message_type()
    if not _unpack(envelope.event, message):
        raise errors.SourceError(
            f"containerd event {envelope.topic} carries {envelope.event.type_url!r}"
        )
    time = seconds(envelope.timestamp) or 0.0
    if isinstance(message, container_pb2.ContainerCreate | container_pb2.ContainerDelete):
        return RuntimeEvent(topic=envelope.topic, container_id=message.id, time=time)
    if isinstance(message, task_pb2.TaskExit | task_pb2.TaskDelete):
        return RuntimeEvent(
            topic=envelope.topic,
            container_id=message.container_id,
            time=time,
            exec_id=message.id,
            pid=message.pid,
            exit_status=message.exit_status,
            exited_at=seconds(message.exited_at),
        )
    if isinstance(message, task_pb2.TaskStart | task_pb2.TaskCreate):
        return RuntimeEvent(
            topic=envelope.topic, container_id=message.container_id, time=time, pid=message.pid
        )
    if isinstance(message, task_pb2.TaskOOM):
        return RuntimeEvent(topic=envelope.topic, container_id=message.container_id, time=time)
    return None


def _unpack(packed: any_pb2.Any, message: Message) -> bool:
    # containerd writes type URLs without a "type.googleapis.com/" prefix, which Any.Unpack
    # refuses; the name after the last slash is the message's full name either way.
    if packed.type_url.rsplit("/", 1)[-1] != message.DESCRIPTOR.full_name:
        return False
    try:
        message.ParseFromString(packed.value)
    except DecodeError:
        return False
    return True


def parse_container(container: containers_pb2.Container) -> ContainerRecord:
    return ContainerRecord(
        id=container.id,
        labels=dict(container.labels),
        image=container.image,
        spec=bytes(container.spec.value),
        created_at=seconds(container.created_at) or 0.0,
    )


def parse_cri_status(status: cri_pb2.ContainerStatus) -> RuntimeStatus:
    """A CRI container status: its state, and for an exited container its code and end."""
    finished_at = nanoseconds(status.finished_at)
    state = _CRI_STATE.get(status.state, "unknown")
    if state == "exited" and finished_at is None:
        state = "unknown"  # CRI says exited only with a finish time: this one is no status
    exited = state == "exited"
    return RuntimeStatus(
        state=state,
        exit_code=status.exit_code if exited else None,
        finished_at=finished_at if exited else None,
    )


def parse_task(process: task_types_pb2.Process) -> TaskRecord:
    return TaskRecord(
        container_id=process.id,
        status=_TASK_STATUS.get(process.status, "unknown"),
        pid=process.pid,
        exit_status=process.exit_status if seconds(process.exited_at) else None,
        exited_at=seconds(process.exited_at),
    )


class Subscription:
    """An open event stream; iterate it, `cancel()` from any thread to end it."""

    def __init__(self, call: grpc.Future) -> None:
        self._call = call

    def __iter__(self) -> Iterator[RuntimeEvent | Skipped]:
        try:
            for envelope in self._call:
                try:
                    event = parse_envelope(envelope)
                except errors.SourceError as exc:
                    # One unreadable event is skipped and counted; the stream goes on.
                    yield Skipped(reason=MALFORMED, detail=str(exc))
                    continue
                if event is not None:
                    yield event
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.CANCELLED:
                return
            raise _source_error("event stream", exc) from exc
        raise errors.SourceError("containerd closed the event stream")

    def cancel(self) -> None:
        self._call.cancel()


class ContainerdClient:
    """containerd's containers, tasks and events services for one namespace, on a unix socket."""

    def __init__(self, address: str, *, namespace: str, timeout_seconds: float) -> None:
        target = address if "://" in address else f"unix://{address}"
        self.address = address
        self._channel = grpc.insecure_channel(target)
        self._metadata = ((NAMESPACE_HEADER, namespace),)
        self._namespace = namespace
        self._timeout = timeout_seconds
        self._containers = containers_pb2_grpc.ContainersStub(self._channel)  # type: ignore[no-untyped-call]
        self._tasks = tasks_pb2_grpc.TasksStub(self._channel)  # type: ignore[no-untyped-call]
        self._events = events_pb2_grpc.EventsStub(self._channel)  # type: ignore[no-untyped-call]
        self._cri = cri_pb2_grpc.RuntimeServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._cri_missing = False  # told UNIMPLEMENTED: this containerd runs no CRI plugin (logged)

    def list_containers(self) -> list[ContainerRecord]:
        try:
            reply = self._containers.List(
                containers_pb2.ListContainersRequest(),
                metadata=self._metadata,
                timeout=self._timeout,
            )
        except grpc.RpcError as exc:
            raise _source_error("list containers", exc) from exc
        return [parse_container(c) for c in reply.containers]

    def get_container(self, container_id: str) -> ContainerRecord | None:
        """The container, or None when containerd no longer has it."""
        try:
            reply = self._containers.Get(
                containers_pb2.GetContainerRequest(id=container_id),
                metadata=self._metadata,
                timeout=self._timeout,
            )
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise _source_error("get container", exc) from exc
        return parse_container(reply.container)

    def list_tasks(self) -> dict[str, TaskRecord]:
        try:
            reply = self._tasks.List(
                tasks_pb2.ListTasksRequest(), metadata=self._metadata, timeout=self._timeout
            )
        except grpc.RpcError as exc:
            raise _source_error("list tasks", exc) from exc
        return {t.id: parse_task(t) for t in reply.tasks}

    def last_status(self, container_id: str) -> RuntimeStatus | None:
        """What the CRI plugin keeps of the container (its status survives the task); None when
        CRI does not know it (not created through CRI, or no CRI plugin at all)."""
        try:
            reply = self._cri.ContainerStatus(
                cri_pb2.ContainerStatusRequest(container_id=container_id),
                metadata=self._metadata,
                timeout=self._timeout,
            )
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                return None
            if exc.code() == grpc.StatusCode.UNIMPLEMENTED:
                # Asked again next time (cheap, and rare: only for a container whose task is gone
                # unseen), in case containerd comes back with the plugin.
                if not self._cri_missing:
                    log.info("containerd serves no CRI; exits unseen stay without their code")
                self._cri_missing = True
                return None
            raise _source_error("CRI container status", exc) from exc
        if not reply.HasField("status"):
            return None
        return parse_cri_status(reply.status)

    def subscribe(self) -> Subscription:
        """Events of this namespace from now on (the stream has no timeout)."""
        filters = [
            f'namespace=="{self._namespace}",topic~="^/tasks/"',
            f'namespace=="{self._namespace}",topic~="^/containers/"',
        ]
        call = self._events.Subscribe(events_pb2.SubscribeRequest(filters=filters))
        return Subscription(call)

    def close(self) -> None:
        self._channel.close()


def _source_error(what: str, exc: grpc.RpcError) -> errors.SourceError:
    code = exc.code()
    details = exc.details()
    return errors.SourceError(f"containerd {what}: {code.name}: {details}")
