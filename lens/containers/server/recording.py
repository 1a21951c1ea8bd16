"""Write container events to the store: one idempotent transaction per batch of an agent's records.

The event server (receiving.py) hands over the records of one agent boot in sequence order,
prepared (rows made, no database) while the previous batch is written. This writes
node_containers, node_container_devices and node_container_events through the store's upsert
helpers and advances event_streams.committed_sequence in the same transaction, so a record is
either committed with its sequence or not at all, and a resent one is skipped. An Inventory
closes the rows of containers that ended while nobody watched; lifecycle.py keeps each row on
its lifecycle.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import operator
from collections.abc import Sequence

import peewee

from lens.containers.model import (
    STATUS_AFTER,
    ContainerEvent,
    EventType,
    Inventory,
    Record,
)
from lens.containers.server import lifecycle
from lens.containers.server.devicesets import DeviceChanges, StoredDevices
from lens.containers.server.extending import Carried, RecordExtension
from lens.store import database, models, upserting


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Committed:
    events: int  # event rows new to the table
    closed: int  # containers an inventory found gone


def at(seconds: float) -> datetime.datetime:
    """Epoch seconds as an aware UTC datetime, rounded to the microsecond (half to even)."""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


@dataclasses.dataclass(frozen=True, slots=True)
class _Told:
    """The events told between two inventories (or the batch's ends), with their rows planned
    as if each container's last event were the whole story, which it nearly always is."""

    cluster: str
    told: tuple[ContainerEvent, ...]
    containers: upserting.Planned | None
    events: upserting.Planned | None

    def write(self) -> int:
        """Write both, each container kept on its lifecycle (lifecycle.py); the event rows new
        to the table."""
        folded = lifecycle.fold(lifecycle.read_states(self.cluster, self.told), self.told)
        if self.containers is not None:
            self.containers.write()
        lifecycle.correct(self.cluster, _stepped_back(self.told, folded))
        events = self.events
        if folded.dropped:
            kept = [e for i, e in enumerate(self.told) if i not in folded.dropped]
            events = _plan_events(self.cluster, kept)
        return 0 if events is None else events.write()


def _stepped_back(
    told: Sequence[ContainerEvent], folded: lifecycle.Folded
) -> dict[str, lifecycle.State]:
    """The containers whose planned row (as of their last event) the lifecycle corrects."""
    last = {e.container.id: e.container for e in told}
    return {
        cid: state
        for cid, state in folded.states.items()
        if cid in last
        and (last[cid].status, last[cid].exit_code) != (state.status, state.exit_code)
    }


def _plan_events(cluster: str, events: Sequence[ContainerEvent]) -> upserting.Planned | None:
    return upserting.plan_insert_new(
        models.NodeContainerEvent,
        upserting.Table(
            EVENT_COLUMNS,
            [event_row(cluster, e) for e in events if e.type is not EventType.OBSERVED],
        ),
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Prepared:
    """An agent's records with their rows made, in sequence order: what `EventRecorder.write`
    writes. Device rows are left to the write, which knows which are stored by then."""

    steps: tuple[_Told | Inventory, ...]
    events: tuple[ContainerEvent, ...]
    # Each extension's rows, made from its records in sequence order (extending.py).
    carried: tuple[tuple[RecordExtension, object], ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class PreparedBatch:
    """One agent boot's batch, prepared, and the sequence its commit marks."""

    node: str
    boot_id: str
    prepared: Prepared
    through: int


class EventRecorder:
    """Commits agents' records for one cluster."""

    def __init__(self, db: peewee.Database, *, cluster: str) -> None:
        self._db = db
        self._cluster = cluster
        self._stored_devices = StoredDevices()

    def committed(self, node: str, boot_id: str) -> int:
        """The highest sequence committed for this agent boot (0: none)."""

        def read() -> int:
            row = (
                models.EventStream.select(models.EventStream.committed_sequence)
                .where(
                    (models.EventStream.cluster == self._cluster)
                    & (models.EventStream.node_name == node)
                    & (models.EventStream.boot_id == boot_id)
                )
                .first()
            )
            return 0 if row is None else int(row.committed_sequence)

        return database.idempotent_transaction(self._db, read)

    def commit(
        self, *, node: str, boot_id: str, records: Sequence[Record | Carried], through: int
    ) -> Committed:
        """Write `records` (in sequence order) and mark `through` committed, atomically."""
        return self.write(
            node=node, boot_id=boot_id, prepared=self.prepare(node, records), through=through
        )

    def prepare(self, node: str, records: Sequence[Record | Carried]) -> Prepared:
        """The rows of `records` made and planned, without the database: the event server
        prepares an agent's next batch while the previous one is being written."""
        steps: list[_Told | Inventory] = []
        told: list[ContainerEvent] = []
        carried: dict[RecordExtension, list[object]] = {}
        for record in records:
            if isinstance(record, Carried):
                carried.setdefault(record.extension, []).append(record.value)
            elif isinstance(record, Inventory):
                steps.append(self._plan_told(node, told))
                steps.append(record)
                told = []
            else:
                told.append(record)
        steps.append(self._plan_told(node, told))
        events = tuple(r for r in records if isinstance(r, ContainerEvent))
        return Prepared(
            steps=tuple(steps),
            events=events,
            carried=tuple((ext, ext.prepare(node, values)) for ext, values in carried.items()),
        )

    def write(self, *, node: str, boot_id: str, prepared: Prepared, through: int) -> Committed:
        """Write what `prepare` made and mark `through` committed, atomically."""
        (committed,) = self.write_group([PreparedBatch(node, boot_id, prepared, through)])
        return committed

    def write_group(self, jobs: Sequence[PreparedBatch]) -> list[Committed]:
        """Write the batches of several agent boots (at most one each) in one transaction."""
        devices = [self._stored_devices.changes(job.prepared.events) for job in jobs]
        for job in jobs:
            for extension, rows in job.prepared.carried:
                extension.before_write(rows)
        # lock_first: a batch that starts with an inventory reads before it writes, while other
        # agents' batches commit (the 8 concurrent agents of issue 16).
        committed = database.idempotent_transaction(
            self._db, lambda: self._write_all(jobs, devices), lock_first=True
        )
        for job, changes in zip(jobs, devices, strict=True):
            self._stored_devices.remember(changes.to_store)
            for extension, rows in job.prepared.carried:
                extension.committed(rows)
        return committed

    def _write_all(
        self, jobs: Sequence[PreparedBatch], devices: Sequence[DeviceChanges]
    ) -> list[Committed]:
        committed = [
            self._write(job.node, job.prepared, changes)
            for job, changes in zip(jobs, devices, strict=True)
        ]
        carried: dict[RecordExtension, list[tuple[str, object]]] = {}
        for job in jobs:
            for extension, rows in job.prepared.carried:
                carried.setdefault(extension, []).append((job.node, rows))
        for extension, batches in carried.items():
            extension.write(batches)
        now = datetime.datetime.now(datetime.UTC)
        through: dict[tuple[str, str], int] = {}
        for job in jobs:  # one stream's batches come one after the other, never two at once
            key = (job.node, job.boot_id)
            through[key] = max(through.get(key, 0), job.through)
        upserting.upsert(
            models.EventStream,
            [
                {
                    "cluster": self._cluster,
                    "node_name": node,
                    "boot_id": boot_id,
                    "committed_sequence": sequence,
                    "created_at": now,
                    "updated_at": now,
                }
                for (node, boot_id), sequence in through.items()
            ],
        )
        return committed

    def _write(self, node: str, prepared: Prepared, devices: DeviceChanges) -> Committed:
        # Applied in sequence order: an inventory judges only the containers told of before it
        # (one told of after it in the same batch was created after its listing).
        new_events = closed = 0
        for step in prepared.steps:
            if isinstance(step, Inventory):
                closed += self._close_missing(node, step)
            else:
                new_events += step.write()
        self._write_devices(devices)
        return Committed(events=new_events, closed=closed)

    def _plan_told(self, node: str, events: Sequence[ContainerEvent]) -> _Told:
        cluster = self._cluster
        # A container's row as of its last event here is the row the upsert would keep anyway.
        last = {e.container.id: e for e in events}
        return _Told(
            cluster,
            tuple(events),
            upserting.plan_upsert(
                models.NodeContainer,
                upserting.Table(
                    CONTAINER_COLUMNS, [container_row(cluster, node, e) for e in last.values()]
                ),
            ),
            _plan_events(cluster, events),
        )

    def _write_devices(self, devices: DeviceChanges) -> None:
        for event in devices.replaced:
            self._drop_other_devices(event)
        rows = [row for e in devices.to_store for row in device_rows(self._cluster, e)]
        upserting.insert_new(models.NodeContainerDevice, upserting.Table(DEVICE_COLUMNS, rows))

    def _drop_other_devices(self, event: ContainerEvent) -> None:
        """Delete the container's device rows that its event no longer lists."""
        table = models.NodeContainerDevice
        kept = functools.reduce(
            operator.or_,
            [
                (table.device_type == d.type) & (table.device_uuid == d.uuid)
                for d in event.container.devices
            ],
        )
        table.delete().where(
            (table.cluster == self._cluster) & (table.container_id == event.container.id) & ~kept
        ).execute()

    def _close_missing(self, node: str, inventory: Inventory) -> int:
        """Mark Deleted the live containers of this node and source the inventory lacks."""
        table = models.NodeContainer
        live = set(inventory.container_ids)
        rows = table.select(table.container_id).where(
            (table.cluster == self._cluster)
            & (table.node_name == node)
            & (table.source == inventory.source.value)
            & (table.status != "Deleted")
        )
        gone = [str(row.container_id) for row in rows if row.container_id not in live]
        if not gone:
            return 0
        when = at(inventory.time)
        for start in range(0, len(gone), 500):
            chunk = gone[start : start + 500]
            table.update(status="Deleted", updated_at=when).where(
                (table.cluster == self._cluster) & table.container_id.in_(chunk)
            ).execute()
        upserting.insert_new(
            models.NodeContainerEvent,
            [
                {
                    "cluster": self._cluster,
                    "container_id": cid,
                    "event_type": "Deleted",
                    "exit_code": None,
                    "created_at": when,
                }
                for cid in gone
            ],
        )
        return len(gone)


CONTAINER_COLUMNS = (
    "cluster",
    "container_id",
    "container_name",
    "pod_uid",
    "pod_name",
    "pod_namespace",
    "status",
    "node_name",
    "source",
    "exit_code",
    "created_at",
    "updated_at",
)
DEVICE_COLUMNS = (
    "cluster",
    "container_id",
    "device_type",
    "device_name",
    "device_no",
    "device_uuid",
    "created_at",
    "updated_at",
)
EVENT_COLUMNS = ("cluster", "container_id", "event_type", "exit_code", "created_at")


def container_row(cluster: str, node: str, event: ContainerEvent) -> tuple[object, ...]:
    """The node_containers row (CONTAINER_COLUMNS) as of `event`."""
    container = event.container
    pod = container.pod
    when = at(event.time)
    return (
        cluster,
        container.id,
        container.name,
        pod.uid if pod else "",
        pod.name if pod else "",
        pod.namespace if pod else "",
        container.status,
        node,
        event.source.value,
        container.exit_code,
        at(container.created_at) if container.created_at else when,
        when,
    )


def device_rows(cluster: str, event: ContainerEvent) -> list[tuple[object, ...]]:
    """The node_container_devices rows (DEVICE_COLUMNS) of the event's container."""
    when = at(event.time)
    cid = event.container.id
    return [
        (cluster, cid, device.type, device.name, device.number, device.uuid, when, when)
        for device in event.container.devices
    ]


def event_row(cluster: str, event: ContainerEvent) -> tuple[object, ...]:
    """The node_container_events row (EVENT_COLUMNS) of `event` (not for OBSERVED: none)."""
    return (
        cluster,
        event.container.id,
        STATUS_AFTER[event.type],
        event.exit_code,
        at(event.time),
    )
