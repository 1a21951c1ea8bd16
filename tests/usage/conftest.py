"""Held GPU-minutes with known utilization written as `lens jobs` writes them, for the idle
GPU tests."""

from __future__ import annotations

import peewee
import pytest

from lens.reports.storing import minutes
from lens.runtime.clock import FakeClock
from tests.reports.storing.conftest import CLUSTER, T0, gpu_minute, holder, write

__all__ = ["CLUSTER", "T0", "Minutes"]


class Minutes:
    """Writes minutes of one node: GPU `uuid` held by `pod` (or by nobody) at `load`."""

    def __init__(self, store: minutes.MinuteStore) -> None:
        self.store = store

    def held(
        self,
        first: int,
        loads: list[float | None],
        *,
        pod: str | None = "train-0",
        uuid: str = "GPU-0",
        node: str = "n1",
        containers: tuple[str, ...] = ("main",),
    ) -> None:
        batch = []
        for i, load in enumerate(loads):
            shares = (
                tuple((holder(pod, container=c), 60.0 / len(containers), 60.0) for c in containers)
                if pod
                else ()
            )
            batch.append(
                gpu_minute(T0 + 60 * (first + i), uuid, shares=shares, utilization_mean_ratio=load)
            )
        write(self.store, node, batch)


@pytest.fixture
def usage_clock() -> FakeClock:
    return FakeClock(start_time=T0 + 120)


@pytest.fixture
def held(db: peewee.Database, usage_clock: FakeClock) -> Minutes:
    return Minutes(minutes.MinuteStore(db, cluster=CLUSTER, clock=usage_clock))
