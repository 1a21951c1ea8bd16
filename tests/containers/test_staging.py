"""The event server's merging of the batches waiting on one stream."""

from __future__ import annotations

import asyncio

from lens.containers import receiving, wire
from lens.containers.model import Container, ContainerEvent, EventType, Source
from lens.proto._generated.lens.v1 import events_pb2 as pb


def _record(sequence: int, cid: str) -> pb.Record:
    container = Container(
        id=cid, name="main", pod=None, devices=(), created_at=1.0, status="Running"
    )
    event = ContainerEvent(
        type=EventType.STARTED, source=Source.CONTAINERD, container=container, time=float(sequence)
    )
    return wire.Encoder().record(event, sequence=sequence, observed_at=1.0)


def test_waiting_batches_of_one_boot_are_merged_up_to_the_limit() -> None:
    """Batches already queued are committed together while they fit and are of the same boot;
    the first that does not is carried to the next commit."""

    def batch(boot: str, *sequences: int) -> pb.EventBatch:
        return pb.EventBatch(
            node="n1", boot_id=boot, records=[_record(s, f"c{s}") for s in sequences]
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
