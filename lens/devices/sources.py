"""One node's device readers, built from the `host` config section in one place.

The node agent (roles/node_agent) and the diagnostics `lens gpus`, `lens rdma` and
`lens containers` build their readers here, so both read the same files under `host.root`
with the same tools, tool timeout and fallbacks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Generic, TypeVar

from lens.devices import nvml as nvml_boundary
from lens.devices.amdgpu import AmdGpuCollector
from lens.devices.gpu import GpuSnapshot
from lens.devices.nvidia import NvidiaGpuCollector
from lens.devices.nvml import Nvml
from lens.devices.rdma import RdmaCollector
from lens.devices.rdmatool import RdmaToolReader
from lens.devices.statics import StaticFactsSource
from lens.devices.sysfs import HostFiles
from lens.devices.tools import ToolRunner
from lens.devices.vendors import VendorPresence
from lens.runtime.config import HostConfig

T = TypeVar("T")


class Lazy(Generic[T]):
    """What `make` makes, made on the first call and kept (made again while it fails): NVML
    and its collector, so nodes without NVIDIA GPUs never import it."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._made: T | None = None

    def __call__(self) -> T:
        if self._made is None:
            self._made = self._make()
        return self._made


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeSources:
    """What every device reader of a node is made from."""

    config: HostConfig
    host: HostFiles
    tools: ToolRunner
    statics: StaticFactsSource
    vendors: VendorPresence
    nvml: Callable[[], Nvml]
    nvidia: Callable[[], NvidiaGpuCollector]
    """The NVIDIA collector, made (and NVML loaded) on first use: call only where NVIDIA GPUs
    are present."""

    def amd_collector(self) -> AmdGpuCollector:
        # Its own files, kept open between reads (sysfs.py): one pread per attribute.
        return AmdGpuCollector(
            HostFiles(self.host.root, keep_open=self.config.keep_files_open),
            static_facts=self.statics.facts,
        )

    def rdma_collector(self, *, tool_fallback: bool = True) -> RdmaCollector:
        """sysfs, and the `rdma` tool (host.rdma_tool) when sysfs lacks the counters."""
        fallback = None
        if tool_fallback:
            fallback = RdmaToolReader(self.tools, tool=self.config.rdma_tool).read
        return RdmaCollector(
            HostFiles(self.host.root, keep_open=self.config.keep_files_open), fallback=fallback
        )


def node_sources(
    cfg: HostConfig, *, wall_time: Callable[[], float], nvml_binding: object | None = None
) -> NodeSources:
    """The readers' shared parts for the host seen at `cfg.root`; nothing is read yet."""
    host = HostFiles(cfg.root)
    tools = ToolRunner(
        prefix=cfg.tool_prefix, timeout_seconds=cfg.tool_timeout_seconds, root=cfg.root
    )
    statics = StaticFactsSource(
        host, tools, amd_smi=cfg.amd_smi, rocm_smi=cfg.rocm_smi, wall_time=wall_time
    )
    nvml = Lazy(lambda: Nvml(nvml_binding or nvml_boundary.load_binding()))
    return NodeSources(
        config=cfg,
        host=host,
        tools=tools,
        statics=statics,
        vendors=VendorPresence(host),
        nvml=nvml,
        nvidia=Lazy(lambda: NvidiaGpuCollector(nvml(), host)),
    )


def nvidia_driver(gpus: list[GpuSnapshot] | tuple[GpuSnapshot, ...]) -> str | None:
    """The NVIDIA driver's version, from the first NVIDIA GPU's static facts."""
    return next((g.static.driver_version for g in gpus if g.vendor == "nvidia" and g.static), None)
