"""Write container events to the store: one idempotent transaction per batch of an agent's records.

The event server (receiving.py) hands over the records of one agent boot in sequence order;
this writes node_containers, node_container_devices and node_container_events through the
store's upsert helpers and advances event_streams.committed_sequence in the same transaction,
so a record is either committed with its sequence or not at all, and a resent one is skipped.
An Inventory closes the rows of containers that ended while nobody watched.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Sequence

import peewee

from lens.containers.model import STATUS_AFTER, ContainerEvent, EventType, Inventory, Record
from lens.store import database, models, upserting


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Committed:
    events: int  # event rows new to the table
    closed: int  # containers an inventory found gone


def at(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(round(seconds, 6), datetime.UTC)


class EventRecorder:
    """Commits agents' records for one cluster."""

    def __init__(self, db: peewee.Database, *, cluster: str) -> None:
        self._db = db
        self._cluster = cluster

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
        self, *, node: str, boot_id: str, records: Sequence[Record], through: int
    ) -> Committed:
        """Write `records` (in sequence order) and mark `through` committed, atomically."""
        return database.idempotent_transaction(
            self._db, lambda: self._write(node, boot_id, records, through)
        )

    def _write(self, node: str, boot_id: str, records: Sequence[Record], through: int) -> Committed:
        events = [r for r in records if isinstance(r, ContainerEvent)]
        new_events = self._write_events(node, events)
        closed = 0
        for record in records:
            if isinstance(record, Inventory):
                closed += self._close_missing(node, record)
        now = datetime.datetime.now(datetime.UTC)
        upserting.upsert(
            models.EventStream,
            [
                {
                    "cluster": self._cluster,
                    "node_name": node,
                    "boot_id": boot_id,
                    "committed_sequence": through,
                    "created_at": now,
                    "updated_at": now,
                }
            ],
        )
        return Committed(events=new_events, closed=closed)

    def _write_events(self, node: str, events: Sequence[ContainerEvent]) -> int:
        if not events:
            return 0
        upserting.upsert(models.NodeContainer, [self._container_row(node, e) for e in events])
        devices = [row for e in events for row in self._device_rows(e)]
        upserting.upsert(models.NodeContainerDevice, devices)
        return upserting.insert_new(
            models.NodeContainerEvent,
            [self._event_row(e) for e in events if e.type is not EventType.OBSERVED],
        )

    def _container_row(self, node: str, event: ContainerEvent) -> upserting.Row:
        container = event.container
        pod = container.pod
        return {
            "cluster": self._cluster,
            "container_id": container.id,
            "container_name": container.name,
            "pod_uid": pod.uid if pod else "",
            "pod_name": pod.name if pod else "",
            "pod_namespace": pod.namespace if pod else "",
            "status": container.status,
            "node_name": node,
            "source": event.source.value,
            "exit_code": container.exit_code,
            "created_at": at(container.created_at or event.time),
            "updated_at": at(event.time),
        }

    def _device_rows(self, event: ContainerEvent) -> list[upserting.Row]:
        return [
            {
                "cluster": self._cluster,
                "container_id": event.container.id,
                "device_type": device.type,
                "device_name": device.name,
                "device_no": device.number,
                "device_uuid": device.uuid,
                "created_at": at(event.time),
                "updated_at": at(event.time),
            }
            for device in event.container.devices
        ]

    def _event_row(self, event: ContainerEvent) -> upserting.Row:
        return {
            "cluster": self._cluster,
            "container_id": event.container.id,
            "event_type": STATUS_AFTER[event.type],
            "exit_code": event.exit_code,
            "created_at": at(event.time),
        }

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
