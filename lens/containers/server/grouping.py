"""Group commit: the batches of many agents' streams written several to a transaction.

A thousand agents close their minute at the same second; each batch alone costs a transaction
(a pooled connection, BEGIN, COMMIT and its flush to disk, the stream's sequence upsert) and a
trip through the thread pool, which is most of a small batch's price. Here every stream's write
waits in one queue of the event loop; up to `writers` groups are written at a time, each taking
whatever waits (up to `max_group`) into one transaction on a worker thread. A lone batch is
written at once, so nothing waits for company; while a group is being written the next one
gathers. When a group fails, each of its batches is written again alone, so one bad batch fails
only its own agent's write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

Job = TypeVar("Job")
Result = TypeVar("Result")


class GroupCommit(Generic[Job, Result]):
    """`await submit(job)`, from the event loop: its result once written with a group.

    `write_group(jobs)` (blocking; run on a worker thread) writes them in one transaction and
    returns their results in order."""

    def __init__(
        self,
        write_group: Callable[[Sequence[Job]], list[Result]],
        *,
        max_group: int = 256,
        writers: int = 2,
    ) -> None:
        if max_group < 1 or writers < 1:
            raise ValueError("max_group and writers must be at least 1")
        self._write_group = write_group
        self._max_group = max_group
        self._writers = writers
        self._queue: list[tuple[Job, asyncio.Future[Result]]] = []
        self._running = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self.groups = 0  # transactions that wrote a group (for tests and benchmarks)

    async def submit(self, job: Job) -> Result:
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_retrieve)
        self._queue.append((job, future))
        self._start_writers()
        # Shielded: a stream that goes away leaves its batch to be written all the same.
        return await asyncio.shield(future)

    def _start_writers(self) -> None:
        while self._running < self._writers and self._queue:
            group = self._queue[: self._max_group]
            del self._queue[: self._max_group]
            self._running += 1
            task = asyncio.create_task(self._write(group))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _write(self, group: list[tuple[Job, asyncio.Future[Result]]]) -> None:
        try:
            await self._write_each_or_alone(group)
        finally:
            self._running -= 1
            self._start_writers()

    async def _write_each_or_alone(self, group: list[tuple[Job, asyncio.Future[Result]]]) -> None:
        try:
            results = await asyncio.to_thread(self._write_group, [job for job, _ in group])
        except Exception as exc:
            if len(group) == 1:
                _settle(group[0][1], error=exc)
                return
            for alone in group:
                await self._write_each_or_alone([alone])
            return
        except BaseException as exc:  # cancelled with the loop: nobody's batch waits forever
            for _, future in group:
                _settle(future, error=exc)
            raise
        self.groups += 1
        for (_, future), result in zip(group, results, strict=True):
            _settle(future, result=result)


def _retrieve(future: asyncio.Future[Result]) -> None:
    """Mark a failure seen: the stream that waited for it may be gone (submit's shield)."""
    if not future.cancelled():
        future.exception()


def _settle(
    future: asyncio.Future[Result],
    *,
    result: Result | None = None,
    error: BaseException | None = None,
) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)  # type: ignore[arg-type]
