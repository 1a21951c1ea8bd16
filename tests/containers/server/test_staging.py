"""The event server's handling of one stream's batches: merging those waiting, staging the next
while the last is written."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import peewee
import pytest

from lens.containers.server import receiving
from lens.containers.server.receiving import EventReceiver, ReceiverMetrics
from lens.containers.server.recording import EventRecorder
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import models


def test_waiting_batches_of_one_boot_are_merged_up_to_the_limit(
    started_record: Callable[[int, str], pb.Record],
) -> None:
    """Batches already queued are committed together while they fit and are of the same boot;
    the first that does not is carried to the next commit."""

    def batch(boot: str, *sequences: int) -> pb.EventBatch:
        return pb.EventBatch(
            node="n1", boot_id=boot, records=[started_record(s, f"c{s}") for s in sequences]
        )

    async def merged() -> list[tuple[str, list[int], object]]:
        queue: receiving._Queue = asyncio.Queue()
        for waiting in (batch("b1", 3, 4), batch("b1", 5), batch("b1", 6, 7), batch("b2", 1)):
            queue.put_nowait(waiting)
        queue.put_nowait(receiving._END)
        out: list[tuple[str, list[int], object]] = []
        taken: pb.EventBatch | receiving._End | None = batch("b1", 1, 2)
        while isinstance(taken, pb.EventBatch):
            together, carried = receiving._merge(taken, queue, 5)
            out.append((together.boot_id, [r.sequence for r in together.records], carried))
            taken = carried if carried is not None else queue.get_nowait()
        return out

    result = asyncio.run(merged())
    assert [(boot, sequences) for boot, sequences, _ in result] == [
        ("b1", [1, 2, 3, 4, 5]),
        ("b1", [6, 7]),
        ("b2", [1]),
    ]
    assert isinstance(result[-1][2], receiving._End)


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_a_batch_staged_before_another_stream_of_its_boot_committed_is_staged_again(
    db: peewee.Database, started_record: Callable[[int, str], pb.Record]
) -> None:
    """Staging happens while the previous batch is written, against the sequence that write will
    commit; should another stream of the same agent boot (a reconnect) commit further meanwhile,
    the staged batch must not take the committed sequence back."""
    metrics = SelfMetrics(process=False)
    receiver = EventReceiver(
        EventRecorder(db, cluster="c1"), metrics=ReceiverMetrics(metrics), batch_records=100
    )

    def merged(*sequences: int) -> receiving._Merged:
        return receiving._Merged(
            node="n1", boot_id="b1", records=[started_record(s, f"c{s}") for s in sequences]
        )

    async def run() -> tuple[int, int]:
        stale = await receiver._stage(merged(1, 2, 3, 4), after=0)
        newer = await receiver._commit(await receiver._stage(merged(1, 2, 3, 4, 5, 6), None))
        again = await receiver._commit(stale)
        return newer.committed_sequence, again.committed_sequence

    assert asyncio.run(run()) == (6, 6)
    assert EventRecorder(db, cluster="c1").committed("n1", "b1") == 6
    assert models.NodeContainerEvent.select().count() == 6

    def counted(name: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(name, labels)

    # Each event counts once as received; the stale batch's four as duplicates.
    assert counted("primus_lens_jobs_container_event_recv_total", source="k8s") == 6
    assert counted("lens_events_duplicates_total") == 4
