from __future__ import annotations

import dataclasses
from pathlib import Path

from lens.runtime.clock import FakeClock
from lens.sim.hosts import infiniband
from lens.sim.hosts.state import NodeSpec
from lens.sim.hosts.tree import HostTree


def test_infiniband_ports_have_lids_and_no_gid_netdevs(memory_dir: Path) -> None:
    tree = HostTree(
        memory_dir, NodeSpec(gpus=0, rdma=2, rdma_link_layer="InfiniBand"), clock=FakeClock()
    ).build()
    port = tree.root / "sys/class/infiniband/mlx5_1/ports/1"
    assert (port / "link_layer").read_text() == "InfiniBand\n"
    assert (port / "lid").read_text() == "0xb\n"
    assert not (port / "gid_attrs").exists()


def test_a_down_port_says_so(memory_dir: Path) -> None:
    tree = HostTree(memory_dir, NodeSpec(gpus=0, rdma=1), clock=FakeClock()).build()
    down = dataclasses.replace(tree.node.port_readings[0], state="DOWN")
    infiniband.write_readings(tree.root, tree.node.nics[0], down)
    assert (
        tree.root / "sys/class/infiniband/mlx5_0/ports/1/state"
    ).read_text().strip() == "1: DOWN"
