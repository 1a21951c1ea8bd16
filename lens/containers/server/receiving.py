"""The jobs event server's side of lens.v1 ContainerEvents: receive, deduplicate, commit, ack.

Each agent stream is read by its own task into a short queue (back-pressure on the agent), and
committed batch by batch: batches already waiting are merged up to a bound, records at or below
the boot's committed sequence are dropped as duplicates, those the store cannot hold (wire.py
says which) are skipped and counted, the rest go through recording.py in one transaction, and
the highest sequence committed or skipped goes back as the Ack. While one batch is written the
next is staged (decoded, its rows made) against the sequence that write will commit, so that
Python's work on one overlaps the database's on the other. Writes of the same agent boot are
serialised, in order; a batch staged before another stream of its boot (a reconnecting agent)
committed further is staged again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import operator
import time
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence

import grpc

from lens.containers import wire
from lens.containers.model import ContainerEvent, Record
from lens.containers.server import serving
from lens.containers.server.extending import Carried, RecordExtension, by_body
from lens.containers.server.grouping import GroupCommit
from lens.containers.server.recording import EventRecorder, Prepared, PreparedBatch
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.proto._generated.lens.v1 import events_pb2_grpc
from lens.runtime.selfmetrics import SelfMetrics

log = logging.getLogger(__name__)

# The original's buckets: 1 ms doubling, 15 of them (~16 s).
PROCESSING_BUCKETS = tuple(0.001 * 2**i for i in range(15))
LAG_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
BATCH_BUCKETS = (1, 5, 10, 50, 100, 500, 1000, 2000, 5000, 10000)
_QUEUED_BATCHES = 8


class _End:
    """Queued after a stream's last batch."""


_END = _End()
_Queue = asyncio.Queue[pb.EventBatch | _End]


class ReceiverMetrics:
    """REFERENCE.md 3.2's primus_lens_jobs_* names plus Lens's own."""

    def __init__(self, metrics: SelfMetrics) -> None:
        self.received = metrics.counter(
            "primus_lens_jobs_container_event_recv_total",
            "Container events received from node agents, by source (k8s or docker).",
            ("source",),
        )
        self.errors = metrics.counter(
            "primus_lens_jobs_container_event_error_total",
            "Container event records that could not be used, by source.",
            ("source",),
        )
        self.connected = metrics.gauge(
            "primus_lens_jobs_upstream_connected",
            "1 per open agent stream, by peer address and source.",
            ("addr", "source"),
        )
        self.stream_errors = metrics.counter(
            "primus_lens_jobs_upstream_error_total", "Agent streams that ended with an error."
        )
        self.processing = metrics.histogram(
            "primus_lens_jobs_event_processing_duration_seconds",
            "Seconds to commit one batch of container events, by source.",
            ("source",),
            buckets=PROCESSING_BUCKETS,
        )
        self.lag = metrics.histogram(
            "lens_events_lag_seconds",
            "Seconds from an agent recording a container event to its commit in the database.",
            buckets=LAG_BUCKETS,
        )
        self.batch = metrics.histogram(
            "lens_events_batch_records",
            "Records committed in one transaction.",
            buckets=BATCH_BUCKETS,
        )
        self.duplicates = metrics.counter(
            "lens_events_duplicates_total",
            "Records ignored because their sequence was already committed (resent by an agent).",
        )
        self.gaps = metrics.counter(
            "lens_events_gaps_total",
            "Records missing from an agent's sequence (dropped from its full buffer).",
        )
        self.committed = metrics.counter(
            "lens_events_committed_total", "Records committed to the database."
        )
        self.invalid = serving.invalid_messages(metrics)
        self.unusable = serving.unusable_records(metrics)


class EventReceiver(events_pb2_grpc.ContainerEventsServicer):
    """Commits agents' batches through `recorder`."""

    def __init__(
        self,
        recorder: EventRecorder,
        *,
        metrics: ReceiverMetrics,
        batch_records: int,
        token: serving.TokenCheck | None = None,
        wall_time: Callable[[], float] = time.time,
        extensions: Sequence[RecordExtension] = (),
    ) -> None:
        self._recorder = recorder
        # Agents' batches written several to a transaction: a cluster's minute of device
        # reports arrives from every node at once.
        self._group = GroupCommit(recorder.write_group)
        self._extensions = by_body(extensions)
        self._metrics = metrics
        self._batch_records = batch_records
        self._token = token
        self._time = wall_time
        self._decoder = wire.Decoder()
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._committed: dict[tuple[str, str], int] = {}

    async def Stream(  # the gRPC method's name
        self,
        request_iterator: AsyncIterator[pb.EventBatch | wire.Garbled],
        context: grpc.aio.ServicerContext[pb.EventBatch, pb.Ack],
    ) -> AsyncIterator[pb.Ack]:
        if self._token is not None and not self._token.allows(context.invocation_metadata()):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
        peer = context.peer()
        queue: _Queue = asyncio.Queue(_QUEUED_BATCHES)
        reader = asyncio.create_task(_read_into(request_iterator, queue))
        self._metrics.connected.labels(peer, "k8s").set(1)
        keys: set[tuple[str, str]] = set()
        try:
            async with contextlib.aclosing(self._acks(queue, keys)) as acks:
                async for ack in acks:
                    yield ack
            ended = await reader
            if isinstance(ended, wire.Garbled):
                self._metrics.invalid.refuse(ended.reason, peer=peer)
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, ended.reason)
            if not ended:
                self._metrics.stream_errors.inc()
        finally:
            reader.cancel()
            self._metrics.connected.remove(peer, "k8s")
            for key in keys:
                lock = self._locks.get(key)
                if lock is not None and not lock.locked():
                    self._locks.pop(key, None)
                    self._committed.pop(key, None)

    async def _acks(
        self, queue: _Queue, keys: set[tuple[str, str]]
    ) -> AsyncGenerator[pb.Ack, None]:
        """Commit the queued batches, one written while the next is staged, in order; an Ack per
        write. `keys` collects the agent boots seen."""
        carried: pb.EventBatch | _End | None = None
        writing: asyncio.Task[pb.Ack] | None = None
        last: _Staged | None = None
        getting: asyncio.Future[pb.EventBatch | _End] | None = None
        try:
            while True:
                if carried is None:
                    getting = asyncio.ensure_future(queue.get())
                    if writing is not None:
                        await asyncio.wait((getting, writing), return_when=asyncio.FIRST_COMPLETED)
                        if not getting.done():
                            # Nothing to stage meanwhile: acknowledge as soon as committed.
                            yield writing.result()
                            writing = None
                    taken = await getting
                    getting = None
                else:
                    taken = carried
                if isinstance(taken, _End):
                    break
                batch, carried = _merge(taken, queue, self._batch_records)
                keys.add(_key(batch))
                after = None
                if writing is not None and last is not None and last.key == _key(batch):
                    after = last.through
                last = await self._stage(batch, after)
                if writing is not None:
                    yield await writing
                writing = asyncio.create_task(self._commit(last))
            if writing is not None:
                yield await writing
                writing = None
        finally:
            if getting is not None:
                getting.cancel()
            if writing is not None and not writing.done():
                # The stream is gone; the write goes on, holding its boot's lock until done, so
                # that the agent's next stream starts from what it committed.
                writing.add_done_callback(_retrieve)

    async def _stage(self, batch: _Merged, after: int | None) -> _Staged:
        """`batch`'s records above `after` (default: what is committed now), decoded and with
        their rows made."""
        key = _key(batch)
        if after is None:
            after = self._committed.get(key)
            if after is None:
                after = await asyncio.to_thread(self._recorder.committed, *key)
                # Kept for the commit, which would read it again: a new boot's first batch (all
                # agents reconnecting at once) costs one read, not two. A commit of another
                # stream of the boot meanwhile has stored a later value, which stays.
                after = self._committed.setdefault(key, after)
        fresh = sorted(
            (r for r in batch.records if r.sequence > after), key=operator.attrgetter("sequence")
        )
        records, sources, unusable, observed = self._decode(fresh)
        return _Staged(
            key=key,
            received=len(batch.records),
            after=after,
            fresh=fresh,
            prepared=self._recorder.prepare(batch.node, records) if fresh else None,
            sources=sources,
            unusable=unusable,
            observed=observed,
        )

    async def _commit(self, staged: _Staged) -> pb.Ack:
        node, boot_id = staged.key
        lock = self._locks.setdefault(staged.key, asyncio.Lock())
        received = staged.received
        async with lock:
            committed = self._committed.get(staged.key)
            if committed is None:
                committed = await asyncio.to_thread(self._recorder.committed, *staged.key)
            if committed != staged.after:
                # Another stream of this boot committed meanwhile (an agent that reconnected
                # while its old stream was still being written): stage again from there.
                staged = await self._stage(
                    _Merged(node=node, boot_id=boot_id, records=staged.fresh), committed
                )
            self._metrics.duplicates.inc(received - len(staged.fresh))
            for source, count in staged.sources.items():
                self._metrics.received.labels(source).inc(count)
            self._metrics.errors.labels("k8s").inc(len(staged.unusable))
            self._metrics.unusable.refuse_all(staged.unusable, node=node, boot_id=boot_id)
            if staged.prepared is not None:
                committed = await self._write(staged, staged.prepared)
            self._committed[staged.key] = committed
        return pb.Ack(boot_id=boot_id, committed_sequence=committed)

    async def _write(self, staged: _Staged, prepared: Prepared) -> int:
        node, boot_id = staged.key
        first = staged.fresh[0].sequence
        # A first sequence past MAX_SEQUENCE is no count of records missed.
        gap = first - staged.after - 1 if first <= wire.MAX_SEQUENCE else 0
        if gap > 0:
            self._metrics.gaps.inc(gap)
            log.warning(
                "agent dropped events before sending them",
                extra={"node": node, "boot_id": boot_id, "missing": gap},
            )
        started = time.perf_counter()
        # Acknowledged past, but the column holds no more: any later record is just as unusable.
        stored = min(staged.through, wire.MAX_SEQUENCE)
        await self._group.submit(PreparedBatch(node, boot_id, prepared, stored))
        self._metrics.processing.labels("k8s").observe(time.perf_counter() - started)
        now = self._time()
        for observed in staged.observed:
            self._metrics.lag.observe(max(0.0, now - observed))
        self._metrics.batch.observe(len(staged.observed))
        self._metrics.committed.inc(len(staged.observed))
        return staged.through

    def _decode(
        self, fresh: list[pb.Record]
    ) -> tuple[list[Record | Carried], Counter[str], list[wire.WireError], list[float]]:
        """The usable records decoded, their events counted by source, why the others are not,
        and when the agent recorded the usable ones."""
        records: list[Record | Carried] = []
        sources: Counter[str] = Counter()
        unusable: list[wire.WireError] = []
        observed: list[float] = []
        for record in fresh:
            try:
                decoded = self._decoded(record)
            except wire.WireError as exc:
                unusable.append(exc)
                continue
            records.append(decoded)
            observed.append(wire.seconds_of(record.observed_at))
            if isinstance(decoded, ContainerEvent):
                sources[decoded.source.value] += 1
        return records, sources, unusable, observed

    def _decoded(self, record: pb.Record) -> Record | Carried:
        extension = self._extensions.get(record.WhichOneof("body") or "")
        if extension is None:
            return self._decoder.record(record)
        if record.sequence > wire.MAX_SEQUENCE:
            raise wire.WireError("sequence out of range", str(record.sequence))
        return Carried(extension, extension.decode(record))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Staged:
    """A merged batch's records above `after`, in sequence order, ready to write."""

    key: tuple[str, str]  # node, boot id
    received: int  # records in the batch, the duplicates among them included
    after: int  # the committed sequence they were chosen against
    fresh: list[pb.Record]
    prepared: Prepared | None  # None: nothing new
    sources: Counter[str]  # fresh events by source (k8s, docker), counted once committed
    unusable: list[wire.WireError]  # why fresh records cannot be written, counted once committed
    observed: list[float]  # when the agent recorded the usable ones (epoch seconds)

    @property
    def through(self) -> int:
        """The sequence acknowledged once written (unusable records included)."""
        return self.fresh[-1].sequence if self.fresh else self.after


def _key(batch: _Merged) -> tuple[str, str]:
    return (batch.node, batch.boot_id)


def _retrieve(task: asyncio.Task[pb.Ack]) -> None:
    """Take the outcome of a write whose stream ended, so that a failure is logged once."""
    if not task.cancelled() and task.exception() is not None:
        log.warning(
            "writing a batch of a closed stream failed", extra={"error": str(task.exception())}
        )


async def _read_into(
    requests: AsyncIterator[pb.EventBatch | wire.Garbled], queue: _Queue
) -> bool | wire.Garbled:
    """Queue the stream's batches, then _END; False when the stream broke off with an error, the
    message that was no batch when one came (the batches before it are committed)."""
    try:
        async for batch in requests:
            if isinstance(batch, wire.Garbled):
                return batch
            await queue.put(batch)
    except (grpc.RpcError, asyncio.CancelledError):
        return False
    finally:
        await queue.put(_END)
    return True


@dataclasses.dataclass(frozen=True, slots=True)
class _Merged:
    """Batches of one agent boot taken together; their records are not copied."""

    node: str
    boot_id: str
    records: list[pb.Record]


def _merge(
    first: pb.EventBatch, queue: _Queue, limit: int
) -> tuple[_Merged, pb.EventBatch | _End | None]:
    """`first` plus the batches of the same boot already waiting, up to `limit` records; and the
    batch taken that did not fit (None: none was)."""
    merged = _Merged(node=first.node, boot_id=first.boot_id, records=list(first.records))
    while not queue.empty() and len(merged.records) < limit:
        following = queue.get_nowait()
        if (
            isinstance(following, _End)
            or following.boot_id != first.boot_id
            or len(merged.records) + len(following.records) > limit
        ):
            return merged, following
        merged.records.extend(following.records)
    return merged, None
