"""Fixtures: host trees built on a fake clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from lens.runtime.clock import FakeClock
from lens.sim.hosts import profiles
from lens.sim.hosts.state import NodeSpec
from lens.sim.hosts.tree import HostTree


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start_time=1_800_000_000.0)


@pytest.fixture
def mi300x(memory_dir: Path, clock: FakeClock) -> HostTree:
    """An 8 x MI300X node with 8 RoCE ports, GPU i steadily at 10*(i+1) % load."""
    loads: list[profiles.Profile] = [profiles.Constant(10.0 * (i + 1)) for i in range(8)]
    return HostTree(
        memory_dir / "host", NodeSpec(name="gpu-node-1"), clock=clock, device_profiles=loads
    ).build()
