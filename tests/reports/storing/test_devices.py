"""Device inventories kept in gpu_devices and rdma_devices, each change one changelog row, on every
engine: known cases, then random sequences of inventories against a model of the truth."""

from __future__ import annotations

import dataclasses
import datetime
import itertools
import json

import peewee
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.reports.inventory import DeviceInventory, GpuFacts, RdmaFacts, RdmaPortFacts
from lens.reports.storing.devices import (
    CREATE,
    DELETE,
    UPDATE,
    Change,
    DeviceChanges,
    DeviceStore,
    gpu_row,
    rdma_row,
)
from lens.store import models

CLUSTER = "c1"
T0 = 1_800_000_000.0
GIB = 2**30


def at(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def gpu(n: int, **facts: object) -> GpuFacts:
    """GPU n of a node: uuid GPU-n, index n, serial Sn, unless `facts` say otherwise."""
    values: dict[str, object] = {
        "uuid": f"GPU-{n}",
        "index": n,
        "vendor": "amd",
        "model": "MI300X",
        "serial": f"S{n}",
        "pci_bus_id": f"0000:{n + 0x10:02x}:00.0",
        "vbios": "113-M3000100-102",
        "vram_bytes": 192 * GIB,
        "numa_node": n // 4,
        "compute_partition": "SPX",
        "memory_partition": "NPS1",
        "driver_version": "6.8.5",
        **facts,
    }
    return GpuFacts(**values)  # type: ignore[arg-type]  # checked by the dataclass at run time


def port(number: int = 1, **facts: object) -> RdmaPortFacts:
    values: dict[str, object] = {
        "state": "ACTIVE",
        "physical_state": "LinkUp",
        "link_layer": "Ethernet",
        "rate_bytes_per_second": 50e9,
        "netdev": f"eth{number}",
        **facts,
    }
    return RdmaPortFacts(port=number, **values)  # type: ignore[arg-type]


def nic(
    name: str = "mlx5_0", *, ports: tuple[RdmaPortFacts, ...] = (), **facts: object
) -> RdmaFacts:
    values: dict[str, object] = {
        "node_guid": "0c42:a103:0065:1a2b",
        "sys_image_guid": "0c42:a103:0065:1a2b",
        "fw_version": "28.39.1002",
        "node_type": "ca",
        "hca_type": "MT4129",
        "board_id": "MT_0000000838",
        "pci_bus_id": "0000:0c:00.0",
        "numa_node": 0,
        "netdevs": ("eth1",),
        **facts,
    }
    return RdmaFacts(name=name, ports=ports or (port(),), **values)  # type: ignore[arg-type]


def inventory(
    time: float = T0,
    gpus: tuple[GpuFacts, ...] | None = None,
    rdma: tuple[RdmaFacts, ...] | None = None,
) -> DeviceInventory:
    return DeviceInventory(time=time, gpus=gpus, rdma=rdma)


@pytest.fixture
def devices(db: peewee.Database) -> DeviceStore:
    return DeviceStore(cluster=CLUSTER)


def write(
    db: peewee.Database, store: DeviceStore, node: str, told: DeviceInventory
) -> DeviceChanges:
    """In a transaction of its own, as the event server's batch."""
    with db.atomic():
        return store.write(node, told)


def changelog(node: str = "n1") -> list[tuple[str, str, str, str, str]]:
    log = models.NodeDeviceChangelog
    query = log.select().where(log.node_name == node).order_by(log.id)
    return [(r.device_type, r.device_name, r.device_uuid, r.op, r.changes) for r in query]


def gpu_rows(node: str = "n1") -> dict[str, models.GpuDevice]:
    table = models.GpuDevice
    return {r.uuid: r for r in table.select().where(table.node_name == node)}


def rdma_rows(node: str = "n1") -> dict[str, models.RdmaDevice]:
    table = models.RdmaDevice
    return {r.ifname: r for r in table.select().where(table.node_name == node)}


def test_a_first_inventory_creates_every_device_with_all_its_facts(
    db: peewee.Database, devices: DeviceStore
) -> None:
    told = inventory(gpus=(gpu(0), gpu(1)), rdma=(nic(ports=(port(1), port(2, state="DOWN"))),))
    written = write(db, devices, "n1", told)
    assert written.by_op() == {CREATE: 3, UPDATE: 0, DELETE: 0}
    assert (written.created, written.updated, written.deleted) == (3, 0, 0)
    assert changelog() == [
        ("gpu", "MI300X", "GPU-0", CREATE, ""),
        ("gpu", "MI300X", "GPU-1", CREATE, ""),
        ("rdma", "mlx5_0", "0c42:a103:0065:1a2b", CREATE, ""),
    ]
    row = gpu_rows()["GPU-1"]
    assert (row.cluster, row.gpu_id, row.vendor, row.gpu_model, row.serial) == (
        CLUSTER,
        1,
        "amd",
        "MI300X",
        "S1",
    )
    assert (row.pci_bus_id, row.vbios, row.vram_bytes, row.memory, row.numa_node) == (
        "0000:11:00.0",
        "113-M3000100-102",
        192 * GIB,
        192 * 1024,
        0,
    )
    assert (row.compute_partition, row.memory_partition, row.driver_version) == (
        "SPX",
        "NPS1",
        "6.8.5",
    )
    assert (row.created_at, row.updated_at, row.deleted_at) == (at(T0), at(T0), None)
    assert (row.utilization, row.temperature, row.power) == (None, None, None)
    device = rdma_rows()["mlx5_0"]
    assert (device.node_guid, device.fw, device.node_type, device.hca_type) == (
        "0c42:a103:0065:1a2b",
        "28.39.1002",
        "ca",
        "MT4129",
    )
    assert (device.board_id, device.pci_bus_id, device.numa_node, device.if_index) == (
        "MT_0000000838",
        "0000:0c:00.0",
        0,
        None,
    )
    assert json.loads(device.netdevs) == ["eth1"]
    assert [p["state"] for p in json.loads(device.ports)] == ["ACTIVE", "DOWN"]
    assert json.loads(device.ports)[0] == {
        "port": 1,
        "state": "ACTIVE",
        "physical_state": "LinkUp",
        "link_layer": "Ethernet",
        "rate_bytes_per_second": 50e9,
        "netdev": "eth1",
    }


def test_the_same_inventory_again_writes_nothing(db: peewee.Database, devices: DeviceStore) -> None:
    told = inventory(gpus=(gpu(0), gpu(1)), rdma=(nic(),))
    write(db, devices, "n1", told)
    before = changelog()
    # A resend, then an agent restarted later reporting the same devices.
    assert write(db, devices, "n1", told) == DeviceChanges()
    assert write(db, devices, "n1", dataclasses.replace(told, time=T0 + 600)).rows == ()
    assert changelog() == before
    assert {r.updated_at for r in [*gpu_rows().values(), *rdma_rows().values()]} == {at(T0)}


def test_a_gpu_removed_is_one_delete_and_keeps_its_row_marked(
    db: peewee.Database, devices: DeviceStore
) -> None:
    write(db, devices, "n1", inventory(gpus=(gpu(0), gpu(1)), rdma=(nic(),)))
    written = write(db, devices, "n1", inventory(T0 + 60, gpus=(gpu(0),), rdma=(nic(),)))
    assert written.rows == (Change(device_type="gpu", device="GPU-1", op=DELETE),)
    assert changelog()[-1] == ("gpu", "MI300X", "GPU-1", DELETE, "")
    rows = gpu_rows()
    assert (rows["GPU-1"].deleted_at, rows["GPU-1"].serial) == (at(T0 + 60), "S1")
    assert (rows["GPU-0"].deleted_at, rows["GPU-0"].updated_at) == (None, at(T0))
    assert write(db, devices, "n1", inventory(T0 + 120, gpus=(gpu(0),))).rows == ()


def test_a_serial_changed_is_one_update_naming_it(
    db: peewee.Database, devices: DeviceStore
) -> None:
    write(db, devices, "n1", inventory(gpus=(gpu(0), gpu(1))))
    written = write(db, devices, "n1", inventory(T0 + 60, gpus=(gpu(0), gpu(1, serial="S9"))))
    assert written.rows == (
        Change(device_type="gpu", device="GPU-1", op=UPDATE, changes='serial: "S1" -> "S9"'),
    )
    assert changelog()[-1] == ("gpu", "MI300X", "GPU-1", UPDATE, 'serial: "S1" -> "S9"')
    rows = gpu_rows()
    assert (rows["GPU-1"].serial, rows["GPU-1"].updated_at) == ("S9", at(T0 + 60))
    assert (rows["GPU-1"].created_at, rows["GPU-0"].updated_at) == (at(T0), at(T0))


def test_an_rdma_port_going_down_is_one_update_naming_the_port(
    db: peewee.Database, devices: DeviceStore
) -> None:
    up = nic(ports=(port(1), port(2)))
    down = nic(ports=(port(1, state="DOWN", physical_state="Disabled"), port(2)))
    write(db, devices, "n1", inventory(rdma=(up, nic("mlx5_1"))))
    written = write(db, devices, "n1", inventory(T0 + 5, rdma=(down, nic("mlx5_1"))))
    named = 'ports[1].state: "ACTIVE" -> "DOWN"; ports[1].physical_state: "LinkUp" -> "Disabled"'
    assert written.rows == (Change(device_type="rdma", device="mlx5_0", op=UPDATE, changes=named),)
    assert changelog()[-1] == ("rdma", "mlx5_0", "0c42:a103:0065:1a2b", UPDATE, named)
    assert json.loads(rdma_rows()["mlx5_0"].ports)[0]["state"] == "DOWN"


def test_a_part_not_read_is_left_alone_and_an_empty_one_deletes(
    db: peewee.Database, devices: DeviceStore
) -> None:
    write(db, devices, "n1", inventory(gpus=(gpu(0),), rdma=(nic(),)))
    # The GPU collector failed (None): its GPUs stay, whatever the RDMA part says.
    assert write(db, devices, "n1", inventory(T0 + 1, rdma=(nic(),))).rows == ()
    assert write(db, devices, "n1", inventory(T0 + 2)).rows == ()
    assert gpu_rows()["GPU-0"].deleted_at is None
    # The RDMA part read and empty: the node has none now.
    written = write(db, devices, "n1", inventory(T0 + 3, rdma=()))
    assert written.rows == (Change(device_type="rdma", device="mlx5_0", op=DELETE),)
    assert gpu_rows()["GPU-0"].deleted_at is None
    assert rdma_rows()["mlx5_0"].deleted_at == at(T0 + 3)


def test_a_device_back_revives_its_row_with_one_create(
    db: peewee.Database, devices: DeviceStore
) -> None:
    write(db, devices, "n1", inventory(gpus=(gpu(0),)))
    first = gpu_rows()["GPU-0"].id
    write(db, devices, "n1", inventory(T0 + 60, gpus=()))
    written = write(db, devices, "n1", inventory(T0 + 120, gpus=(gpu(0, numa_node=1),)))
    assert written.rows == (Change(device_type="gpu", device="GPU-0", op=CREATE),)
    row = gpu_rows()["GPU-0"]
    assert (row.id, row.deleted_at, row.numa_node) == (first, None, 1)
    assert (row.created_at, row.updated_at) == (at(T0), at(T0 + 120))
    assert [op for *_, op, _ in changelog()] == [CREATE, DELETE, CREATE]


def test_gpus_renumbered_keep_their_rows_with_the_new_index_and_log_nothing(
    db: peewee.Database, devices: DeviceStore
) -> None:
    # A GPU is its uuid; its index is where the node lists it: GPU-0 leaving the bus shifts
    # the others' indexes, and that is its one DELETE, not also an UPDATE of each.
    write(db, devices, "n1", inventory(gpus=(gpu(0), gpu(1), gpu(2))))
    shifted = (gpu(1, index=0), gpu(2, index=1))
    written = write(db, devices, "n1", inventory(T0 + 60, gpus=shifted))
    assert [(c.device, c.op) for c in written.rows] == [("GPU-0", DELETE)]
    rows = gpu_rows()
    assert {u: r.gpu_id for u, r in rows.items()} == {"GPU-0": 0, "GPU-1": 0, "GPU-2": 1}
    assert rows["GPU-1"].updated_at == at(T0 + 60)
    moved = write(db, devices, "n1", inventory(T0 + 120, gpus=(gpu(1, index=0, serial="X"),)))
    assert [(c.device, c.op, c.changes) for c in moved.rows] == [
        ("GPU-1", UPDATE, 'serial: "S1" -> "X"'),
        ("GPU-2", DELETE, ""),
    ]


def test_changes_at_one_time_never_collide(db: peewee.Database, devices: DeviceStore) -> None:
    told = [
        inventory(gpus=(gpu(0),)),
        inventory(gpus=()),
        inventory(gpus=(gpu(0),)),
        inventory(gpus=(gpu(0, serial="X"),)),
        inventory(gpus=(gpu(0, serial="Y"),)),
    ]
    with db.atomic():
        for one in told:
            devices.write("n1", one)
    assert [op for *_, op, _ in changelog()] == [CREATE, DELETE, CREATE, UPDATE, UPDATE]


def test_other_nodes_and_clusters_are_untouched(db: peewee.Database, devices: DeviceStore) -> None:
    write(db, devices, "n1", inventory(gpus=(gpu(0),), rdma=(nic(),)))
    write(db, DeviceStore(cluster="c2"), "n1", inventory(gpus=(gpu(0),), rdma=(nic(),)))
    write(db, devices, "n2", inventory(gpus=(gpu(0),), rdma=(nic(),)))
    write(db, devices, "n1", inventory(T0 + 60, gpus=(), rdma=()))
    table = models.GpuDevice
    live = table.select(table.cluster, table.node_name).where(table.deleted_at.is_null())
    assert sorted(live.tuples()) == [("c1", "n2"), ("c2", "n1")]
    assert len(changelog("n2")) == 2


def test_several_changes_of_one_device_make_one_row(
    db: peewee.Database, devices: DeviceStore
) -> None:
    write(db, devices, "n1", inventory(gpus=(gpu(0),), rdma=(nic(),)))
    changed_gpu = gpu(0, vbios=None, vram_bytes=96 * GIB, driver_version="6.10.5")
    changed_nic = nic(netdevs=("eth2", "eth1"), ports=(port(1), port(2)), fw_version=None)
    written = write(db, devices, "n1", inventory(T0 + 1, gpus=(changed_gpu,), rdma=(changed_nic,)))
    assert [(c.device, c.changes) for c in written.rows] == [
        (
            "GPU-0",
            'vbios: "113-M3000100-102" -> null; vram_bytes: 206158430208 -> 103079215104; '
            'driver_version: "6.8.5" -> "6.10.5"',
        ),
        (
            "mlx5_0",
            'fw: "28.39.1002" -> null; netdevs: ["eth1"] -> ["eth1","eth2"]; '
            'ports[2]: null -> {"state":"ACTIVE","physical_state":"LinkUp",'
            '"link_layer":"Ethernet","rate_bytes_per_second":50000000000.0,"netdev":"eth2"}',
        ),
    ]
    assert gpu_rows()["GPU-0"].memory == 96 * 1024


def test_each_change_of_a_gpus_health_is_a_changelog_row_with_its_reason(
    db: peewee.Database, devices: DeviceStore
) -> None:
    write(db, devices, "n1", inventory(gpus=(gpu(0, health="healthy"), gpu(1, health="healthy"))))
    throttled = gpu(1, health="degraded: throttle_thermal")
    written = write(
        db, devices, "n1", inventory(T0 + 60, gpus=(gpu(0, health="healthy"), throttled))
    )
    assert [(c.device, c.op, c.changes) for c in written.rows] == [
        ("GPU-1", UPDATE, 'health: "healthy" -> "degraded: throttle_thermal"')
    ]
    assert gpu_rows()["GPU-1"].health == "degraded: throttle_thermal"
    again = write(
        db, devices, "n1", inventory(T0 + 120, gpus=(gpu(0, health="healthy"), throttled))
    )
    assert again.rows == ()  # the same judgement resent: nothing


def test_the_order_a_node_lists_netdevs_and_ports_in_changes_nothing(
    db: peewee.Database, devices: DeviceStore
) -> None:
    write(db, devices, "n1", inventory(rdma=(nic(netdevs=("b", "a"), ports=(port(1), port(2))),)))
    again = nic(netdevs=("a", "b", "a"), ports=(port(2), port(1)))
    assert write(db, devices, "n1", inventory(T0 + 1, rdma=(again,))).rows == ()


def test_values_the_columns_cannot_hold_are_made_to_fit(
    db: peewee.Database, devices: DeviceStore
) -> None:
    odd = gpu(
        0,
        uuid="GPU-" + "u" * 200,
        index=2**40,
        model="M\x00I300X" + "m" * 300,
        serial="\ud800bad",
        vram_bytes=-1,
        numa_node=2**33,
    )
    ports = (port(1, rate_bytes_per_second=float("nan")), port(1, state="DOWN"))
    odd_nic = nic("n" * 300, node_guid="g" * 100, netdevs=("x" * 100,), ports=ports)
    told = inventory(gpus=(odd, gpu(1), gpu(1, serial="dup"), gpu(2, uuid="")), rdma=(odd_nic,))
    assert write(db, devices, "n1", told).by_op()[CREATE] == 3
    rows = gpu_rows()
    assert set(rows) == {"GPU-" + "u" * 124, "GPU-1"}
    row = rows["GPU-" + "u" * 124]
    assert (row.gpu_id, row.gpu_model, row.serial) == (-1, "MI300X" + "m" * 122, "?bad")
    assert (row.vram_bytes, row.memory, row.numa_node) == (None, None, None)
    assert rows["GPU-1"].serial == "S1"
    (device,) = rdma_rows().values()
    assert (len(device.ifname), len(device.node_guid), json.loads(device.netdevs)) == (
        128,
        64,
        ["x" * 64],
    )
    (only,) = json.loads(device.ports)
    assert (only["state"], only["rate_bytes_per_second"]) == ("ACTIVE", None)
    assert write(db, devices, "n1", dataclasses.replace(told, time=T0 + 1)).rows == ()


def test_facts_too_many_for_their_column_are_cut_not_refused(
    db: peewee.Database, devices: DeviceStore
) -> None:
    many = tuple(port(n, netdev="e" * 64) for n in range(1, 1001))
    write(db, devices, "n1", inventory(rdma=(nic(ports=many),)))
    stored = rdma_rows()["mlx5_0"].ports
    assert len(stored) <= 60_000
    assert [p["port"] for p in json.loads(stored)] == list(range(1, len(json.loads(stored)) + 1))
    assert write(db, devices, "n1", inventory(T0 + 1, rdma=(nic(ports=many),))).rows == ()


def test_a_time_the_store_cannot_hold_is_brought_into_range(
    db: peewee.Database, devices: DeviceStore
) -> None:
    write(db, devices, "n1", inventory(1e300, gpus=(gpu(0),)))
    assert gpu_rows()["GPU-0"].created_at.year == 9999


def test_rows_are_made_from_the_facts_alone() -> None:
    assert gpu_row(gpu(3))["uuid"] == "GPU-3"
    assert gpu_row(gpu(3, vram_bytes=None))["memory"] is None
    assert rdma_row(nic(netdevs=("b", "a")))["netdevs"] == '["a","b"]'


# --- random sequences of inventories ----------------------------------------------------------

GPU_UUIDS = ("GPU-a", "GPU-b", "GPU-c")
NIC_NAMES = ("mlx5_0", "mlx5_1", "bnxt_re0")
short_text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=4)


@st.composite
def gpu_facts(draw: st.DrawFn, uuid: str) -> GpuFacts:
    return GpuFacts(
        uuid=uuid,
        index=draw(st.integers(0, 3)),
        vendor=draw(st.sampled_from(["amd", "nvidia"])),
        model=draw(st.sampled_from(["MI300X", "H100"])),
        serial=draw(short_text),
        pci_bus_id=draw(st.sampled_from(["0000:1b:00.0", "0000:9a:00.0"])),
        vbios=draw(st.none() | short_text),
        vram_bytes=draw(st.none() | st.integers(0, 2**63 - 1)),
        numa_node=draw(st.none() | st.integers(-1, 1)),
        compute_partition=draw(st.none() | st.sampled_from(["SPX", "CPX"])),
        memory_partition=draw(st.none() | st.just("NPS1")),
        driver_version=draw(st.none() | short_text),
        health=draw(st.none() | st.sampled_from(["healthy", "unhealthy: ecc_uncorrectable"])),
    )


@st.composite
def rdma_facts(draw: st.DrawFn, name: str) -> RdmaFacts:
    numbers = draw(st.lists(st.integers(1, 3), unique=True, max_size=2).map(sorted))
    ports = tuple(
        RdmaPortFacts(
            port=number,
            state=draw(st.none() | st.sampled_from(["ACTIVE", "DOWN"])),
            physical_state=draw(st.none() | st.just("LinkUp")),
            link_layer=draw(st.none() | st.sampled_from(["Ethernet", "InfiniBand"])),
            rate_bytes_per_second=draw(st.none() | st.floats(0, 1e12)),
            netdev=draw(st.none() | short_text),
        )
        for number in numbers
    )
    netdevs = draw(st.lists(st.sampled_from(["eth0", "eth1", "ib0"]), unique=True).map(sorted))
    return RdmaFacts(
        name=name,
        node_guid=draw(st.none() | st.sampled_from(["g1", "g2"])),
        fw_version=draw(st.none() | short_text),
        numa_node=draw(st.none() | st.integers(0, 1)),
        netdevs=tuple(netdevs),
        ports=ports,
    )


@st.composite
def inventories(draw: st.DrawFn) -> DeviceInventory:
    gpus = rdma = None
    if draw(st.booleans()):
        uuids = draw(st.lists(st.sampled_from(GPU_UUIDS), unique=True))
        gpus = tuple(draw(gpu_facts(u)) for u in uuids)
    if draw(st.booleans()):
        names = draw(st.lists(st.sampled_from(NIC_NAMES), unique=True))
        rdma = tuple(draw(rdma_facts(n)) for n in names)
    return DeviceInventory(time=T0, gpus=gpus, rdma=rdma)


def stored_gpu(row: models.GpuDevice) -> GpuFacts:
    return GpuFacts(
        uuid=row.uuid,
        index=row.gpu_id,
        vendor=row.vendor,
        model=row.gpu_model,
        serial=row.serial,
        pci_bus_id=row.pci_bus_id,
        vbios=row.vbios,
        vram_bytes=row.vram_bytes,
        numa_node=row.numa_node,
        compute_partition=row.compute_partition,
        memory_partition=row.memory_partition,
        driver_version=row.driver_version,
        health=row.health,
    )


def stored_rdma(row: models.RdmaDevice) -> RdmaFacts:
    return RdmaFacts(
        name=row.ifname,
        node_guid=row.node_guid,
        sys_image_guid=row.sys_image_guid,
        fw_version=row.fw,
        node_type=row.node_type,
        hca_type=row.hca_type,
        board_id=row.board_id,
        pci_bus_id=row.pci_bus_id,
        numa_node=row.numa_node,
        netdevs=tuple(json.loads(row.netdevs)),
        ports=tuple(RdmaPortFacts(**p) for p in json.loads(row.ports)),
    )


_nodes = itertools.count()


@given(st.lists(inventories(), min_size=1, max_size=6))
def test_random_inventories_keep_the_last_successful_read_and_alternate_in_the_changelog(
    db: peewee.Database, sequence: list[DeviceInventory]
) -> None:
    node = f"node-{next(_nodes)}"  # the database lives across examples
    store = DeviceStore(cluster=CLUSTER)
    gpus: dict[str, GpuFacts] = {}
    nics: dict[str, RdmaFacts] = {}
    rows = 0
    for step, told in enumerate(sequence):
        told = dataclasses.replace(told, time=T0 + step)
        expected = _expected_ops(gpus, told.gpus, "uuid") + _expected_ops(nics, told.rdma, "name")
        written = write(db, store, node, told)
        assert sorted(c.op for c in written.rows) == sorted(expected)
        rows += len(written.rows)
        if told.gpus is not None:
            gpus = {g.uuid: g for g in told.gpus}
        if told.rdma is not None:
            nics = {d.name: d for d in told.rdma}
        live_gpus = {u: stored_gpu(r) for u, r in gpu_rows(node).items() if r.deleted_at is None}
        live_nics = {n: stored_rdma(r) for n, r in rdma_rows(node).items() if r.deleted_at is None}
        assert (live_gpus, live_nics) == (gpus, nics)
        assert write(db, store, node, dataclasses.replace(told, time=T0 + step + 0.5)).rows == ()
    log = changelog(node)
    assert len(log) == rows
    for kind, identity in (("gpu", 2), ("rdma", 1)):
        for device in {entry[identity] for entry in log if entry[0] == kind}:
            ops = [e[3] for e in log if e[0] == kind and e[identity] == device and e[3] != UPDATE]
            assert ops == [CREATE, DELETE] * (len(ops) // 2) + [CREATE] * (len(ops) % 2), ops


def _expected_ops(
    live: dict[str, GpuFacts] | dict[str, RdmaFacts],
    told: tuple[GpuFacts, ...] | tuple[RdmaFacts, ...] | None,
    identity: str,
) -> list[str]:
    """What the truth says one part of an inventory changes: CREATE, UPDATE or DELETE each."""
    if told is None:
        return []
    now = {getattr(device, identity): device for device in told}
    ops = [CREATE if key not in live else UPDATE for key, d in now.items() if live.get(key) != d]
    return ops + [DELETE for key in live if key not in now]
