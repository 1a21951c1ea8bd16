"""The node agent and the diagnostics build their readers here, from the `host` config."""

from __future__ import annotations

from lens.devices import sources
from lens.devices.gpu import GpuSnapshot
from lens.runtime.config import HostConfig
from lens.sim.hosts.tree import HostTree


def test_readers_read_the_host_under_the_configured_root(mi300x: HostTree) -> None:
    cfg = HostConfig(root=str(mi300x.root), tool_timeout_seconds=7)
    node = sources.node_sources(cfg, wall_time=lambda: 100.0)
    assert node.vendors.refresh() == {"amd"}
    assert node.statics.refresh().source == "amd-smi"
    collection = node.amd_collector().collect()
    assert [gpu.index for gpu in collection.gpus] == list(range(8))
    assert collection.gpus[0].static is not None, "the static facts of the shared source"
    ports = node.rdma_collector().collect()
    assert [device.name for device in ports.devices] == [f"mlx5_{i}" for i in range(8)]


def test_nvml_is_loaded_once_and_only_when_asked(h100: HostTree) -> None:
    loads: list[object] = []
    binding = h100.nvml()

    class Counting:
        def __getattr__(self, name: str) -> object:
            loads.append(name)
            return getattr(binding, name)

    node = sources.node_sources(
        HostConfig(root=str(h100.root)), wall_time=lambda: 0.0, nvml_binding=Counting()
    )
    assert loads == [], "building the sources touches no NVML"
    collection = node.nvidia().collect()
    assert node.nvidia() is node.nvidia()
    assert len(collection.gpus) == 2
    assert node.nvml() is node.nvml()
    assert sources.nvidia_driver(collection.gpus) == collection.gpus[0].static.driver_version  # type: ignore[union-attr]


def test_no_nvidia_gpu_no_driver(mi300x: HostTree) -> None:
    node = sources.node_sources(HostConfig(root=str(mi300x.root)), wall_time=lambda: 0.0)
    node.statics.refresh()
    gpus: tuple[GpuSnapshot, ...] = node.amd_collector().collect().gpus
    assert sources.nvidia_driver(gpus) is None
