"""Group commit: batches waiting while groups are written share the next transaction; a failing
group is written again batch by batch, so only the bad one fails."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest

from lens.containers.server.grouping import GroupCommit


class Writer:
    """Holds its first group until released, so that the others gather behind it."""

    def __init__(self) -> None:
        self.groups: list[list[int]] = []
        self.release = threading.Event()

    def write(self, jobs: Sequence[int]) -> list[int]:
        self.groups.append(list(jobs))
        if len(self.groups) == 1:
            assert self.release.wait(5)
        if 13 in jobs:
            raise ValueError("job 13 is bad")
        return [job * 10 for job in jobs]


async def _outcomes(group: GroupCommit[int, int], writer: Writer, jobs: list[int]) -> list[object]:
    first = asyncio.ensure_future(group.submit(jobs[0]))
    while not writer.groups:  # the first is being written
        await asyncio.sleep(0.001)
    rest = [asyncio.ensure_future(group.submit(job)) for job in jobs[1:]]
    await asyncio.sleep(0.01)
    writer.release.set()
    return list(await asyncio.gather(first, *rest, return_exceptions=True))


def test_batches_waiting_while_one_is_written_go_together_in_the_next_group() -> None:
    writer = Writer()
    group: GroupCommit[int, int] = GroupCommit(writer.write, max_group=3, writers=1)
    outcomes = asyncio.run(_outcomes(group, writer, [1, 2, 3, 4, 5]))
    assert outcomes == [10, 20, 30, 40, 50]
    assert writer.groups == [[1], [2, 3, 4], [5]]
    assert group.groups == 3


def test_a_bad_batch_fails_alone_and_the_others_of_its_group_are_written() -> None:
    writer = Writer()
    group: GroupCommit[int, int] = GroupCommit(writer.write, writers=1)
    outcomes = asyncio.run(_outcomes(group, writer, [1, 12, 13, 14]))
    assert outcomes[:2] == [10, 120] and outcomes[3] == 140
    assert isinstance(outcomes[2], ValueError)
    assert writer.groups == [[1], [12, 13, 14], [12], [13], [14]]


def test_a_second_writer_takes_what_gathers_while_the_first_is_busy() -> None:
    writer = Writer()
    group: GroupCommit[int, int] = GroupCommit(writer.write, writers=2)

    async def run() -> list[object]:
        first = asyncio.ensure_future(group.submit(1))
        while not writer.groups:
            await asyncio.sleep(0.001)
        second = await group.submit(2)  # written while the first still waits
        writer.release.set()
        return [await first, second]

    assert asyncio.run(run()) == [10, 20]
    assert writer.groups == [[1], [2]]


def test_a_group_of_none_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        GroupCommit(lambda jobs: [], max_group=0)
