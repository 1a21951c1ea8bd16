"""RDMA families: lens_ib_* in base units, state sets, and the original rdma_stat_* gauges."""

from __future__ import annotations

from lens.devices import ib
from lens.devices.ib import RdmaPort
from lens.devices.rdma import RdmaCollector
from lens.devices.sysfs import HostFiles
from lens.runtime import families
from lens.runtime.selfmetrics import check_family
from lens.runtime.textformat import SnapshotFamilies
from lens.sim.hosts.tree import HostTree


def _render(tree: HostTree) -> str:
    snapshot = RdmaCollector(HostFiles(tree.root)).collect()
    ports, devices = SnapshotFamilies(ib.PORT_FAMILIES), SnapshotFamilies(ib.DEVICE_FAMILIES)
    ports.update(snapshot.ports)
    devices.update(snapshot.devices)
    return devices.render_text() + ports.render_text() + ib.render_compat(snapshot.ports)


def test_families_are_valid_and_unique() -> None:
    families.check_groups([ib.PORT_FAMILIES, ib.DEVICE_FAMILIES])


def test_eight_ports_render_as_the_golden_file(mi300x: HostTree, golden) -> None:
    golden("rdma.prom", _render(mi300x))


def test_port_state_is_a_state_set() -> None:
    port = RdmaPort(device="mlx5_0", port=1, state="ACTIVE", physical_state="Weird")
    samples = dict(
        ((spec.name, labels), value)
        for spec in ib.PORT_FAMILIES.specs
        for labels, value in spec.samples(port)
        if spec.name.endswith("state")
    )
    assert samples[("lens_ib_port_state", ("ACTIVE",))] == 1.0
    assert samples[("lens_ib_port_state", ("DOWN",))] == 0.0
    assert len([k for k in samples if k[0] == "lens_ib_port_state"]) == len(ib.PORT_STATES)
    assert samples[("lens_ib_port_physical_state", ("Weird",))] == 1.0, "an unknown state is kept"


def test_compat_names_are_valid_metric_names() -> None:
    port = RdmaPort(device="ionic_1", port=1, hw_counters=(("tx-rdma.bytes", 5), ("cnp", 1)))
    text = ib.render_compat([port])
    assert 'rdma_stat_tx_rdma_bytes{device="ionic_1",port="1"} 5.0' in text
    assert "# TYPE rdma_stat_cnp gauge" in text
    names = {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE")}
    assert names == {"rdma_stat_tx_rdma_bytes", "rdma_stat_cnp"}
    for name in names:
        check_family(name, "A help.", "gauge", ("device", "port"))
