"""Fixtures: a scenario played on a fake clock against a running emulator."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lens.runtime.clock import FakeClock
from lens.sim.kube.server import KubeApiServer


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start_time=1_800_000_000.0)


@pytest.fixture
def kube(clock: FakeClock) -> Iterator[KubeApiServer]:
    server = KubeApiServer(clock=clock, history_size=10_000).start()
    yield server
    server.stop()
