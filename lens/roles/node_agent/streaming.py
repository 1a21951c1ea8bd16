"""The node agent's event stream to `lens jobs`: one numbered, journaled outbox and its shipper,
shared by container tracking (container events) and device reports (minutes, inventory).

Both put records in the same outbox, so they share one sequence, one journal and one stream:
what the server acknowledges is committed, and what it has not is resent after a restart of
either side (docs/events.md). Without `events.server_address` nothing is shipped: container
events are still numbered and kept (bounded, the oldest dropped and counted), and device reports
are not made at all (roles/node_agent/main.py).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from lens.containers.model import Record
from lens.containers.node.journal import Journal
from lens.containers.node.outbox import Outbox
from lens.containers.node.shipping import EventShipper, ShipperMetrics
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.runtime import lifecycle
from lens.runtime.config import EventsConfig
from lens.runtime.selfmetrics import SelfMetrics


class EventStream:
    """A service part: ships the outbox while the agent runs (when a server is configured)."""

    name = "event-stream"

    def __init__(
        self,
        events: EventsConfig,
        *,
        node: str,
        metrics: SelfMetrics,
        wall_time: Callable[[], float] = time.time,
    ) -> None:
        shipped = ShipperMetrics(metrics)
        self._watchers: list[Callable[[Record], None]] = []
        boot_id = uuid.uuid4().hex
        journal = Journal(events.journal_dir, boot_id=boot_id) if events.journal_dir else None
        self.outbox = Outbox(
            boot_id=boot_id,
            capacity=events.buffer_records,
            wall_time=wall_time,
            journal=journal,
            on_drop=shipped.dropped.inc,
        )
        shipped.buffered.set_function(lambda: len(self.outbox))
        self.shipper = (
            EventShipper(events, outbox=self.outbox, node=node, metrics=shipped)
            if events.server_address
            else None
        )

    def watch(self, watcher: Callable[[Record], None]) -> None:
        """Have `watcher` see each container record put, after it is in the outbox."""
        self._watchers.append(watcher)

    def put(self, record: Record) -> None:
        self.outbox.put(record)
        for watcher in self._watchers:
            watcher(record)

    def put_message(self, message: pb.Record) -> None:
        self.outbox.put_message(message)

    async def start(self) -> None:
        if self.shipper is not None:
            self.shipper.start()

    async def stop(self) -> None:
        await lifecycle.in_thread(self._stop, name="event-stream-stop")

    def _stop(self) -> None:
        if self.shipper is not None:
            self.shipper.stop()
        self.outbox.close()
