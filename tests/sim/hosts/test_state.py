from __future__ import annotations

from lens.sim.hosts import profiles
from lens.sim.hosts.state import NodeModel, NodeSpec, gpu_identities


def test_identities_are_reproducible_per_node_and_seed() -> None:
    one = NodeModel(NodeSpec(name="n1", seed=3), start=0)
    again = NodeModel(NodeSpec(name="n1", seed=3), start=0)
    other = NodeModel(NodeSpec(name="n2", seed=3), start=0)
    assert one.gpus == again.gpus and one.nics == again.nics
    assert [g.serial for g in one.gpus] != [g.serial for g in other.gpus]
    assert len({g.unique_id for g in one.gpus}) == 8
    assert [g.numa_node for g in one.gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert gpu_identities(NodeSpec(name="n1", seed=3)) == one.gpus, "the same without a model"


def test_partitions_take_cards_and_render_nodes_after_the_physical_gpus() -> None:
    node = NodeModel(NodeSpec(gpus=2, compute_partition="QPX", rdma=0), start=0)
    assert [g.card for g in node.gpus] == [1, 2]
    cards = [p.card for g in node.gpus for p in g.partitions]
    assert cards == [3, 4, 5, 6, 7, 8]
    assert [p.render_minor for p in node.gpus[1].partitions] == [133, 134, 135]


def test_counters_integrate_the_load() -> None:
    busy: list[profiles.Profile] = [profiles.Constant(100)]
    node = NodeModel(NodeSpec(gpus=1, rdma=1), start=0, device_profiles=busy)
    node.advance(10)
    first = (node.gpu_readings[0].energy_j, node.port_readings[0].xmit_bytes)
    node.advance(20)
    second = (node.gpu_readings[0].energy_j, node.port_readings[0].xmit_bytes)
    assert second[0] == 2 * first[0] > 0
    assert second[1] == 2 * first[1] > 0
    node.advance(15)  # time going back adds nothing
    assert node.gpu_readings[0].energy_j == second[0]
