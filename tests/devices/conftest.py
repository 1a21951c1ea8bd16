"""Fixtures: simulated host trees (8 x MI300X with 8 RoCE ports, a partitioned MI300X, 2 x H100)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lens.devices.sysfs import HostFiles
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


@pytest.fixture
def cpx(memory_dir: Path, clock: FakeClock) -> HostTree:
    """Two MI300X in CPX mode (8 compute partitions each), InfiniBand ports."""
    spec = NodeSpec(
        name="gpu-node-cpx", gpus=2, rdma=2, compute_partition="CPX", rdma_link_layer="InfiniBand"
    )
    return HostTree(memory_dir / "host", spec, clock=clock).build()


@pytest.fixture
def h100(memory_dir: Path, clock: FakeClock) -> HostTree:
    """Two NVIDIA H100 and one InfiniBand port."""
    spec = NodeSpec(name="gpu-node-nv", model="H100", gpus=2, rdma=1, rdma_link_layer="InfiniBand")
    return HostTree(memory_dir / "host", spec, clock=clock).build()


@pytest.fixture
def host(mi300x: HostTree) -> HostFiles:
    return HostFiles(mi300x.root)
