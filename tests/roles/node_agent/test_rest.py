"""The REST views: the original's envelope and names, fresh readings, inventory with its age."""

from __future__ import annotations

import json

from lens.devices.dri import DriMapping, DriNode
from lens.devices.gpu import GpuCollection, GpuSnapshot, GpuStatic
from lens.devices.ib import RdmaDevice, RdmaPort, RdmaSnapshot
from lens.devices.statics import EMPTY, StaticInventory
from lens.roles.node_agent.rest import NodeApi
from lens.roles.node_agent.state import AgentState
from lens.runtime.clock import FakeClock
from lens.runtime.httpserver import Request

REQUEST = Request(path="/", query={}, headers={})
BDF = "0000:05:00.0"
STATIC = GpuStatic(
    pci_bus_id=BDF,
    market_name="AMD Instinct MI300X",
    vram_bytes=192 * 1024**3,
    driver_version="6.10.5",
    compute_partition="SPX",
    source="amd-smi",
)
GPU = GpuSnapshot(
    vendor="amd",
    index=0,
    pci_bus_id=BDF,
    card="card1",
    model="AMD Instinct MI300X",
    serial="S1",
    uuid="ed260bf20ec72185",
    utilization_ratio=0.42,
    memory_used_bytes=48 * 1024**3,
    memory_total_bytes=192 * 1024**3,
    temperatures_celsius=(("junction", 61.0), ("memory", 50.0)),
    power_watts=400.0,
    static=STATIC,
)
INVENTORY = StaticInventory(
    facts={BDF: STATIC},
    driver_version="6.10.5",
    source="amd-smi",
    tool_read_at=40.0,
    refreshed_at=100.0,
)


def _data(response) -> object:
    document = json.loads(response.body)
    assert document["meta"] == {"code": 2000, "message": "OK"} and document["tracing"] is None
    return document["data"]


def _api(statics: StaticInventory = INVENTORY) -> tuple[NodeApi, AgentState, FakeClock]:
    clock = FakeClock(start_time=100.0)
    state = AgentState(clock.time)
    api = NodeApi(state, statics=lambda: statics, nvidia_driver=lambda: None)
    return api, state, clock


def test_gpus_in_amd_smi_shape_with_dri_and_the_facts_age() -> None:
    api, state, clock = _api()
    state.gpus["amd"].keep(GpuCollection((GPU,)))
    card = DriNode(
        pci_bus_id=BDF,
        card="/dev/dri/card1",
        render="/dev/dri/renderD128",
        driver="amdgpu",
        partition=0,
    )
    state.dri.keep(DriMapping(nodes=(card,), kfd="/dev/kfd"))
    clock.advance(20)
    (gpu,) = _data(api.gpus(REQUEST))
    assert gpu["gpu"] == 0 and gpu["bus"] == {"bdf": BDF}
    assert gpu["asic"]["market_name"] == "AMD Instinct MI300X"
    assert gpu["asic"]["asic_serial"] == "0xED260BF20EC72185"
    assert gpu["vram"]["size"] == {"value": 196608, "unit": "MB"}
    assert gpu["driver"] == {"name": "amdgpu", "version": "6.10.5"}
    assert gpu["dri_device"] == {
        "pciAddr": BDF,
        "card": "/dev/dri/card1",
        "cardId": 0,
        "render": "/dev/dri/renderD128",
    }
    assert gpu["static_facts"] == {
        "source": "amd-smi",
        "read_at": 40.0,
        "age_seconds": 80.0,
        "problems": [],
    }
    assert gpu["last_seen"] == 100.0


def test_card_metrics_only_while_fresh() -> None:
    api, state, _ = _api()
    state.gpus["amd"].keep(GpuCollection((GPU,)))
    (row,) = _data(api.card_metrics(REQUEST))
    assert row["gpu_use_percent"] == 42.0 and row["gpu_memory_allocated_percent"] == 25.0
    assert row["temperature_junction"] == 61.0 and row["temperature_memory"] == 50.0
    assert row["socket_graphics_power_watts"] == 400.0 and row["collected_at"] == 100.0
    state.gpus["amd"].lose("EIO")
    assert _data(api.card_metrics(REQUEST)) == []
    assert len(_data(api.gpus(REQUEST))) == 1, "the inventory stays"


def test_driver_version_and_its_absence() -> None:
    api, _, _ = _api()
    assert _data(api.driver_version(REQUEST)) == "6.10.5"
    nothing = NodeApi(
        AgentState(FakeClock().time), statics=lambda: EMPTY, nvidia_driver=lambda: None
    )
    body = json.loads(nothing.driver_version(REQUEST).body)
    assert body["meta"] == {"code": 4004, "message": "no GPU driver found on this node"}
    nvidia = NodeApi(
        AgentState(FakeClock().time), statics=lambda: EMPTY, nvidia_driver=lambda: "550"
    )
    assert _data(nvidia.driver_version(REQUEST)) == "550"


def test_dri_mapping_lists_gpus_and_partitions_only() -> None:
    api, state, _ = _api()
    state.gpus["amd"].keep(GpuCollection((GPU,)))
    nodes = (
        DriNode(
            pci_bus_id="0000:02:00.0", card="/dev/dri/card0", render=None, driver="ast", partition=0
        ),
        DriNode(
            pci_bus_id=BDF,
            card="/dev/dri/card1",
            render="/dev/dri/renderD128",
            driver="amdgpu",
            partition=0,
        ),
        DriNode(
            pci_bus_id=BDF,
            card="/dev/dri/card9",
            render="/dev/dri/renderD136",
            driver="amdgpu",
            partition=1,
            platform="amdgpu_xcp.0",
        ),
    )
    state.dri.keep(DriMapping(nodes=nodes, kfd=None))
    mapping = _data(api.dri_mapping(REQUEST))
    assert set(mapping) == {"/dev/dri/card1", "/dev/dri/card9"}, "not the BMC's display"
    assert mapping["/dev/dri/card9"] == {
        "pciAddr": BDF,
        "card": "/dev/dri/card9",
        "cardId": 0,
        "render": "/dev/dri/renderD136",
        "partition": 1,
    }


def test_rdma_as_rdma_dev_show_with_age() -> None:
    api, state, clock = _api()
    assert _data(api.rdma(REQUEST)) == []
    port = RdmaPort(device="mlx5_0", port=1, state="ACTIVE", link_layer="Ethernet")
    device = RdmaDevice(
        name="mlx5_0",
        index=0,
        node_type="CA",
        fw_version="28.39.1002",
        node_guid="b8ce:0000:0000:0001",
        sys_image_guid="b8ce:0000:0000:0001",
        uverbs=("uverbs0",),
        ports=(port,),
    )
    state.rdma.keep(RdmaSnapshot(devices=(device,), source="sysfs"))
    clock.advance(3)
    state.rdma.lose("EIO")
    (row,) = _data(api.rdma(REQUEST))
    assert {k: row[k] for k in ("ifindex", "ifname", "node_type", "fw")} == {
        "ifindex": 0,
        "ifname": "mlx5_0",
        "node_type": "ca",
        "fw": "28.39.1002",
    }
    assert row["ports"][0]["state"] == "ACTIVE" and row["uverbs"] == ["uverbs0"]
    assert (row["source"], row["observed_at"], row["age_seconds"]) == ("sysfs", 100.0, 3.0)
