"""The agent's REST state: last good results, marked when their collector fails."""

from __future__ import annotations

from lens.devices.dri import DriMapping, DriNode
from lens.devices.gpu import GpuCollection, GpuSnapshot
from lens.roles.node_agent.state import AgentState
from lens.runtime.clock import FakeClock


def _gpu(vendor: str, index: int, bdf: str) -> GpuSnapshot:
    return GpuSnapshot(
        vendor=vendor, index=index, pci_bus_id=bdf, card="", model="m", serial="", uuid=""
    )


def test_keep_and_lose() -> None:
    clock = FakeClock(start_time=100.0)
    state = AgentState(clock.time)
    assert state.rdma.get() is None
    state.allocation.lose("nothing kept yet")
    assert state.allocation.get() is None
    state.gpus["amd"].keep(GpuCollection((_gpu("amd", 0, "0000:05:00.0"),)))
    clock.advance(5)
    state.gpus["amd"].lose("EIO")
    observed = state.gpus["amd"].get()
    assert observed is not None and observed.at == 100.0
    assert observed.failure == "EIO" and not observed.fresh
    state.gpus["amd"].keep(GpuCollection(()))
    assert state.gpus["amd"].get().fresh


def test_known_gpus_amd_first_and_units_count_partitions() -> None:
    state = AgentState(FakeClock().time)
    assert state.known_gpus() == [] and state.gpu_units() is None
    state.gpus["nvidia"].keep(GpuCollection((_gpu("nvidia", 2, "0000:f1:00.0"),)))
    state.gpus["amd"].keep(
        GpuCollection((_gpu("amd", 0, "0000:05:00.0"), _gpu("amd", 1, "0000:26:00.0")))
    )
    assert [g.vendor for g, _ in state.known_gpus()] == ["amd", "amd", "nvidia"]
    assert state.gpu_units() == 3, "without a DRI mapping each GPU is one unit"
    nodes = tuple(
        DriNode(
            pci_bus_id="0000:05:00.0",
            card=f"/dev/dri/card{i}",
            render=None,
            driver="amdgpu",
            partition=i,
        )
        for i in range(4)
    )
    state.dri.keep(DriMapping(nodes=nodes, kfd="/dev/kfd"))
    assert state.gpu_units() == 6, "a GPU in four partitions is four"
