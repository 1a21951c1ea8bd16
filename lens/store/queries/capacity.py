"""The cluster's GPU capacity over time, from the agents' inventories (gpu_devices: each GPU from
the inventory that first told of it until the one it left in): how many GPU-seconds there were
to allocate within an interval, for series.py's allocation over time.

A GPU whose node was lost keeps its row, and so its capacity, as the allocation now does
(docs/jobs.md); a GPU counts only from the moment its agent first reported it, so a cluster's
first minute is not taken for a whole one.
"""

from __future__ import annotations

import bisect
import datetime
import math
from collections.abc import Iterable

from lens.store import database, models


class Capacity:
    """GPUs present as a step function of time, integrated (pure once built)."""

    def __init__(self, intervals: Iterable[tuple[float, float]]) -> None:
        """`intervals`: each GPU's [from, until) in unix seconds (until math.inf: present)."""
        changes: dict[float, int] = {}
        for since, until in intervals:
            if until <= since:
                continue
            changes[since] = changes.get(since, 0) + 1
            if math.isfinite(until):
                changes[until] = changes.get(until, 0) - 1
        self._times: list[float] = sorted(changes)
        self._counts: list[int] = []  # GPUs present from each time on
        self._integral: list[float] = []  # GPU-seconds before each time
        count, total, previous = 0, 0.0, None
        for moment in self._times:
            if previous is not None:
                total += count * (moment - previous)
            count += changes[moment]
            self._counts.append(count)
            self._integral.append(total)
            previous = moment

    def _before(self, moment: float) -> float:
        """GPU-seconds from the first GPU until `moment`."""
        index = bisect.bisect_right(self._times, moment) - 1
        if index < 0:
            return 0.0
        return self._integral[index] + self._counts[index] * (moment - self._times[index])

    def seconds(self, start: float, end: float) -> float:
        """GPU-seconds present within [start, end)."""
        if end <= start:
            return 0.0
        return self._before(end) - self._before(start)


def _unix(moment: datetime.datetime | None) -> float:
    return math.inf if moment is None else moment.timestamp()


def cluster_capacity(cluster: str) -> Capacity:
    """The cluster's GPUs over time, as its agents' inventories told (read in a session)."""
    device = models.GpuDevice
    query = (
        device.select(device.created_at, device.deleted_at)
        .where(device.cluster == cluster)
        .tuples()
    )
    return Capacity(
        (_unix(created), _unix(deleted)) for created, deleted in database.tuple_rows(query)
    )
