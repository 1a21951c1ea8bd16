"""Numbered records (container events, device reports) awaiting the server's acknowledgement.

The tracker puts records in; shipping.py takes batches out, sends them and acknowledges what the
server committed. A record stays until acknowledged; when the outbox is full the oldest record
is dropped and counted. Records a previous process left in the journal come first, under their
own boot id and sequences.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from lens.containers import wire
from lens.containers.model import Record
from lens.containers.node.journal import Entry, Journal
from lens.proto._generated.lens.v1 import events_pb2 as pb


class Outbox:
    """A FIFO of encoded records; thread-safe."""

    def __init__(
        self,
        *,
        boot_id: str,
        capacity: int,
        wall_time: Callable[[], float],
        journal: Journal | None = None,
        on_drop: Callable[[], None] | None = None,
    ) -> None:
        self.boot_id = boot_id
        self._on_drop = on_drop
        self._capacity = capacity
        self._time = wall_time
        self._journal = journal
        self._encoder = wire.Encoder()
        self._entries: list[Entry] = []
        self._removed = 0  # positions cut from the front of _entries
        self._head = 0  # position of the oldest record held; those before are gone
        self._sequence = 0
        self._cond = threading.Condition()
        self.dropped = 0
        self.acknowledged = 0
        self.put_total = 0
        if journal is not None:
            self._entries.extend(journal.load())

    def __len__(self) -> int:
        with self._cond:
            return self._end() - self._head

    @property
    def last_sequence(self) -> int:
        return self._sequence

    def put(self, record: Record) -> None:
        # Encoded before taking the lock, which the shipper needs to take batches out.
        self._append(self._encoder.record(record, sequence=0, observed_at=self._time()))

    def put_message(self, message: pb.Record) -> None:
        """Number and keep a record of another domain (its body set; the rest is the outbox's:
        sequence and observed_at), as container events are."""
        wire.stamp(message, observed_at=self._time())
        self._append(message)

    def _append(self, encoded: pb.Record) -> None:
        with self._cond:
            self._sequence += 1
            encoded.sequence = self._sequence
            data = encoded.SerializeToString()
            self._entries.append(Entry(boot_id=self.boot_id, sequence=self._sequence, data=data))
            if self._journal is not None:
                self._journal.append(self._sequence, data)
            self.put_total += 1
            if self._end() - self._head > self._capacity:
                self._drop_oldest()
            self._cond.notify_all()

    def first_position(self) -> int:
        """Where a new connection starts sending: the oldest record still held."""
        with self._cond:
            return self._head

    def take(
        self, position: int, limit: int, timeout: float, *, max_bytes: int | None = None
    ) -> tuple[int, list[Entry]]:
        """Up to `limit` records of one boot from `position` on (waiting up to `timeout` for one),
        and the position after them; no more than `max_bytes` of them, unless one record alone is
        larger. A position below the head (dropped meanwhile) starts there. Positions count
        every record the outbox ever held, so they stay valid as it shrinks."""
        with self._cond:
            if max(position, self._head) >= self._end():
                self._cond.wait(timeout)
            start = max(position, self._head)
            index = start - self._removed
            batch: list[Entry] = []
            room = max_bytes
            for entry in self._entries[index : index + limit]:
                if batch and entry.boot_id != batch[0].boot_id:
                    break
                if room is not None:
                    if batch and len(entry.data) > room:
                        break
                    room -= len(entry.data)
                batch.append(entry)
            if self._journal is not None and batch:
                self._journal.flush()
            return start + len(batch), batch

    def acknowledge(self, boot_id: str, sequence: int) -> int:
        """Forget `boot_id`'s records up to `sequence` (the server committed them); how many."""
        with self._cond:
            removed = 0
            while self._head < self._end():
                entry = self._entries[self._head - self._removed]
                if entry.boot_id != boot_id or entry.sequence > sequence:
                    break
                self._head += 1
                removed += 1
            self.acknowledged += removed
            if removed and self._journal is not None:
                self._journal.forget(boot_id, sequence)
            self._compact()
            return removed

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()

    def _end(self) -> int:
        return self._removed + len(self._entries)

    def _drop_oldest(self) -> None:
        dropped = self._entries[self._head - self._removed]
        self._head += 1
        self.dropped += 1
        if self._on_drop is not None:
            self._on_drop()
        if self._journal is not None:
            self._journal.forget(dropped.boot_id, dropped.sequence)
        self._compact()

    def _compact(self) -> None:
        cut = self._head - self._removed
        if cut > 4096 and cut > len(self._entries) // 2:
            del self._entries[:cut]
            self._removed += cut
