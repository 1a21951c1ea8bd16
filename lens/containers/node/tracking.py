"""Turn containerd's records and events into Lens containers and events, nothing lost or doubled.

The tracker keeps every live container it reports, so exit and delete events still carry the
pod and devices after containerd has forgotten the container. A resync (at start, after every
reconnect, and periodically) lists containers and tasks and reports what the event stream
missed: creations and exits with their own times (so a repeat is a duplicate the server drops),
containers gone meanwhile, and an Inventory of the live ones. watching.py drives it.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from lens.containers.model import (
    STATUS_AFTER,
    Container,
    ContainerEvent,
    EventType,
    Inventory,
    Pod,
    Record,
    Source,
)
from lens.containers.node import spec
from lens.containers.node.attribution import (
    DeviceLookup,
    KnownDevice,
    attribute,
    with_allocated_gpus,
)
from lens.containers.node.records import (
    ContainerRecord,
    RuntimeEvent,
    RuntimeStatus,
    TaskRecord,
)
from lens.runtime import errors

log = logging.getLogger(__name__)


class ContainerReader(Protocol):
    """What the tracker reads from the runtime (containerd.ContainerdClient)."""

    def get_container(self, container_id: str) -> ContainerRecord | None: ...

    def list_containers(self) -> list[ContainerRecord]: ...

    def list_tasks(self) -> dict[str, TaskRecord]: ...


@runtime_checkable
class StatusReader(Protocol):
    """A runtime that keeps a container's status after its task is gone: containerd with its
    CRI plugin (Docker never lists a container without its state)."""

    def last_status(self, container_id: str) -> RuntimeStatus | None: ...


_TASK_STATUS = {"created": "Created", "running": "Running", "paused": "Running", "stopped": "Exit"}


class ContainerTracker:
    """Live containers of one source and the events that change them."""

    def __init__(
        self,
        *,
        source: Source,
        lookup: DeviceLookup,
        emit: Callable[[Record], None],
        all_containers: bool = False,
        allocated: Callable[[Pod, str], Sequence[KnownDevice]] | None = None,
    ) -> None:
        """`allocated(pod, container name)`: the GPUs the kubelet gave that container, which
        override those its spec lists (empty: no word from the kubelet)."""
        self.source = source
        self._lookup = lookup
        self._allocated = allocated
        self._emit = emit
        self._all = all_containers
        self._live: dict[str, Container] = {}
        self._oom_killed: set[str] = set()  # OOM kill reported since the container's last start
        # When each live container last started, by the runtime's clock: a container that exits
        # at once is told of its start after its process's exit time (issue 16, point 2).
        self._started_at: dict[str, float] = {}
        # Exited containers containerd has since given a new task (/tasks/create): their next
        # start is a new run, not a late word of the one that ended.
        self._new_task: set[str] = set()
        # Containers followed running whose task a listing no longer had, and when it first did:
        # their exit is most likely still on its way as events (a task is deleted right after
        # its exit), so one more listing waits for it before an exit is inferred.
        self._taskless: dict[str, float] = {}
        self._lock = threading.Lock()

    def containers(self) -> list[Container]:
        """The live containers reported, in creation order."""
        with self._lock:
            return sorted(self._live.values(), key=lambda c: (c.created_at, c.id))

    def handle(self, event: RuntimeEvent, reader: ContainerReader) -> None:
        """Act on one containerd event."""
        with self._lock:
            if event.topic == "/containers/create":
                self._created(event, reader)
            elif event.topic == "/containers/delete":
                self._deleted(event.container_id, event.time)
            elif event.topic == "/tasks/create":
                self._task_created(event.container_id, event.time)
            elif event.topic == "/tasks/start":
                self._change(event.container_id, EventType.STARTED, event.time, reader)
            elif event.topic == "/tasks/oom":
                self._change(event.container_id, EventType.OOM_KILLED, event.time, reader)
            elif event.topic in ("/tasks/exit", "/tasks/delete"):
                self._exited(event, reader)

    def resync(self, reader: ContainerReader, *, now: float) -> None:
        """Report what events missed, then the Inventory of live containers."""
        # Listed and told under the lock: an event applied between the listing and its use
        # would be undone by the older listing, and a creation told before the inventory that
        # lacks it would be closed by it.
        with self._lock:
            records = reader.list_containers()
            tasks = reader.list_tasks()
            listed: set[str] = set()
            for record in records:
                task = tasks.get(record.id)
                container = self._container(record, task)
                if container is None:
                    continue
                listed.add(record.id)
                if task is None:
                    container = self._without_task(container, now, reader)
                self._reconcile(container)
            for gone in [cid for cid in self._live if cid not in listed]:
                self._deleted(gone, now)
            ids = tuple(sorted(self._live))
            self._emit(Inventory(source=self.source, time=now, container_ids=ids))

    def _without_task(self, container: Container, now: float, reader: ContainerReader) -> Container:
        """A listed container whose task is gone, as the CRI plugin deletes it right after an
        exit. An exit seen keeps its status and code; else the CRI plugin's status tells (an
        agent that was down knows nothing of its own). Without either, "no task" is Created only
        for a container seen created and never running; any other exited unseen, its code
        unknown: never Created, which would step the stored lifecycle back. One followed running
        keeps running until a second listing without its task (its exit event, on its way, would
        otherwise be told as a second exit: the inferred one without a code)."""
        known = self._live.get(container.id)
        if known is not None and (known.exited_at is not None or known.status == "Exit"):
            return dataclasses.replace(
                container,
                status=known.status,
                exit_code=known.exit_code,
                exited_at=known.exited_at,
            )
        status = reader.last_status(container.id) if isinstance(reader, StatusReader) else None
        if status is not None and status.state == "exited":
            return dataclasses.replace(
                container, status="Exit", exit_code=status.exit_code, exited_at=status.finished_at
            )
        if status is not None and status.state == "running":
            # CRI deletes the task before it records the exit, which is on its way as events.
            return dataclasses.replace(container, status="Running")
        never_ran = known is None or known.status == "Created"
        if never_ran and status is not None and status.state == "created":
            return container
        if known is not None and known.status == "Created" and status is None:
            return container
        if known is not None and known.status == "Running":
            if container.id not in self._taskless:
                self._taskless[container.id] = now
                return dataclasses.replace(container, status="Running")
            now = self._taskless.pop(container.id)  # still no exit told: it exited unseen
        return dataclasses.replace(container, status="Exit", exit_code=None, exited_at=now)

    def _reconcile(self, container: Container) -> None:
        known = self._live.get(container.id)
        self._live[container.id] = container
        if known is None:
            self._report(EventType.CREATED, container, container.created_at)
            self._report(EventType.OBSERVED, container, container.created_at)
        elif known.status != container.status or known.devices != container.devices:
            self._report(EventType.OBSERVED, container, container.created_at)
        if container.exited_at is not None and (known is None or known.exited_at is None):
            self._report(
                EventType.EXITED,
                container,
                self._exit_stamp(container.id, container.exited_at),
                exit_code=container.exit_code,
            )

    def _created(self, event: RuntimeEvent, reader: ContainerReader) -> None:
        if event.container_id in self._live:
            return  # a resync found it first
        record = reader.get_container(event.container_id)
        container = None if record is None else self._container(record, None)
        if container is None:
            return
        self._live[container.id] = container
        self._report(EventType.CREATED, container, container.created_at)

    def _change(
        self, container_id: str, kind: EventType, time: float, reader: ContainerReader
    ) -> None:
        known = self._known(container_id, reader)
        if known is None:
            return
        status = STATUS_AFTER[kind]
        if kind is EventType.STARTED:
            if known.exited_at is not None and not self._runs_again(container_id, time, known):
                return  # a start told after the exit it preceded: the lifecycle never goes back
            self._new_task.discard(container_id)
            self._taskless.pop(container_id, None)
            self._oom_killed.discard(container_id)
            self._started_at[container_id] = time
            known = dataclasses.replace(known, exit_code=None, exited_at=None)
        elif kind is EventType.OOM_KILLED:
            if container_id in self._oom_killed:
                # One kill, several notifications: containerd sends /tasks/oom for each change
                # of the cgroup's memory.events (oom, then oom_kill, a few ms apart).
                return
            self._oom_killed.add(container_id)
            if known.status == "Exit":
                status = "Exit"  # Docker may tell of the kill after the exit it caused
        changed = dataclasses.replace(known, status=status)
        self._live[container_id] = changed
        self._report(kind, changed, time)

    def _exited(self, event: RuntimeEvent, reader: ContainerReader) -> None:
        if event.exec_id not in ("", event.container_id):
            return  # an exec'd process, not the container's own
        known = self._known(event.container_id, reader)
        exited_at = event.exited_at or event.time
        if known is None or known.exited_at == exited_at:
            return  # /tasks/delete repeats the exit /tasks/exit reported
        # An exit status the runtime did not give stays unknown: 0 would claim a success.
        changed = dataclasses.replace(
            known, status="Exit", exit_code=event.exit_status, exited_at=exited_at
        )
        self._live[changed.id] = changed
        self._new_task.discard(changed.id)
        self._taskless.pop(changed.id, None)
        stamped = self._exit_stamp(changed.id, exited_at)
        self._report(EventType.EXITED, changed, stamped, exit_code=changed.exit_code)

    def _task_created(self, container_id: str, time: float) -> None:
        # A task is created (and told) before its process starts: one told after an exit but
        # stamped before it is the ended run's own, told late.
        known = self._live.get(container_id)
        if known is not None and known.exited_at is not None and time > known.exited_at:
            self._new_task.add(container_id)

    def _runs_again(self, container_id: str, time: float, known: Container) -> bool:
        """Whether a start told after an exit is a new run. containerd runs a container again
        only in a new task, told of by /tasks/create; without one, the start is the ended
        run's, told late (its time, when containerd published it, may be after the exit).
        Docker tells of its events in order: a start after the exit is a restart."""
        if container_id in self._new_task:
            return True
        exited_at = known.exited_at
        return self.source is Source.DOCKER and exited_at is not None and time > exited_at

    def _exit_stamp(self, container_id: str, exited_at: float) -> float:
        """An exit's time, no earlier than its start: a fast container's start event can carry
        a later time than its exit, and the stored lifecycle must read created, running, exited
        (one microsecond later: the store keeps microseconds, and a tie would not order them)."""
        started_at = self._started_at.get(container_id)
        return exited_at if started_at is None else max(exited_at, started_at + 1e-6)

    def _deleted(self, container_id: str, time: float) -> None:
        self._taskless.pop(container_id, None)
        self._oom_killed.discard(container_id)
        self._new_task.discard(container_id)
        self._started_at.pop(container_id, None)
        known = self._live.pop(container_id, None)
        if known is not None:
            self._report(EventType.DELETED, dataclasses.replace(known, status="Deleted"), time)

    def _known(self, container_id: str, reader: ContainerReader) -> Container | None:
        known = self._live.get(container_id)
        if known is not None:
            return known
        # Created before the subscription and not yet resynced: adopt it now.
        record = reader.get_container(container_id)
        container = None if record is None else self._container(record, None)
        if container is not None:
            self._live[container_id] = container
            self._report(EventType.CREATED, container, container.created_at)
        return container

    def _container(self, record: ContainerRecord, task: TaskRecord | None) -> Container | None:
        """The container as Lens reports it; None when it is not reported (sandbox, no device)."""
        if spec.is_sandbox(record.labels):
            return None
        try:
            devices = attribute(spec.parse_spec_devices(record.spec), self._lookup)
        except errors.SourceError as exc:
            log.warning(
                "container spec unreadable; no devices attributed",
                extra={"container": record.id, "reason": str(exc)},
            )
            devices = ()
        pod = spec.pod_of(record.labels)
        name = spec.container_name(record.id, record.labels, record.name)
        if pod is not None and self._allocated is not None:
            allocated = self._allocated(pod, name)
            if allocated:
                devices = with_allocated_gpus(devices, allocated)
        if not devices and not self._all:
            return None
        status = _TASK_STATUS.get(task.status, "Created") if task else "Created"
        return Container(
            id=record.id,
            name=name,
            pod=pod,
            devices=devices,
            image=record.image,
            created_at=record.created_at,
            status=status,
            exit_code=task.exit_status if task and task.exited_at else None,
            exited_at=task.exited_at if task else None,
        )

    def _report(
        self, kind: EventType, container: Container, time: float, *, exit_code: int | None = None
    ) -> None:
        self._emit(
            ContainerEvent(
                type=kind, source=self.source, container=container, time=time, exit_code=exit_code
            )
        )
