"""The collector registry: names checked at startup, bindings per config, families documented."""

from __future__ import annotations

import pytest

from lens.devices.nvml import Nvml
from lens.devices.sysfs import HostFiles
from lens.devices.tools import ToolRunner
from lens.kube.allocation import GpuAllocation, PodGpuRequest
from lens.kube.kubelet import KubeletClient
from lens.roles.node_agent import collectors
from lens.runtime import errors
from lens.runtime.config import HostConfig, KubeletConfig, NodeAgentConfig
from lens.sim.hosts.tree import HostTree

from .conftest import MakeAgent


def test_the_registry_names() -> None:
    assert [e.name for e in collectors.COLLECTORS] == [
        "amdgpu",
        "nvidia",
        "dri",
        "rdma",
        "kubelet",
        "ephemeral_storage",
    ]
    collectors.check_names(["rdma", "dri"])
    with pytest.raises(errors.ConfigError, match="unknown: infiniband"):
        collectors.check_names(["rdma", "infiniband"])


def test_families_are_declared_once_and_documented() -> None:
    collectors.check_families()
    documented = {doc.name for _, docs in collectors.metric_docs() for doc in docs}
    assert {"lens_gpu_info", "gpu_utilization", "node_k8s_gpu_allocation_rate"} <= documented
    assert {"rdma_stat_<counter>", "lens_collector_success"} <= documented


def test_vendor_presence_follows_the_bus(mi300x: HostTree) -> None:
    presence = collectors.VendorPresence(HostFiles(mi300x.root))
    assert not presence.present("amd"), "nothing before the first refresh"
    assert presence.refresh() == {"amd"}
    assert presence.present("amd") and not presence.present("nvidia")


def test_bindings_follow_the_config(mi300x: HostTree, make_agent: MakeAgent) -> None:
    agent = make_agent(mi300x, collectors=("amdgpu", "rdma"), rdma_interval_seconds=5)
    names = [slot.binding.name for slot in agent.cycle._slots]
    assert names == ["amdgpu", "rdma"]
    rdma = agent.cycle._slots[1].binding
    assert rdma.interval_seconds == 5 and rdma.timeout_seconds == 5
    assert agent.cycle._slots[0].binding.timeout_seconds == 1, "never longer than the interval"


def test_gpu_resources_shown_for_present_vendors_or_when_requested(
    mi300x: HostTree, make_agent: MakeAgent
) -> None:
    agent = make_agent(mi300x, collectors=("amdgpu",))
    parts = collectors.AgentParts(
        config=NodeAgentConfig(),
        host_config=HostConfig(),
        host=HostFiles(mi300x.root),
        state=agent.state,
        statics=agent.statics,
        vendors=agent.vendors,
        tools=ToolRunner(),
        nvml=lambda: Nvml(object()),
        kubelet=lambda: KubeletClient(KubeletConfig(url="https://127.0.0.1:1")),
    )
    nothing = GpuAllocation(pods=())
    assert collectors._resources_of(parts, nothing) == ["amd.com/gpu"]
    odd = GpuAllocation(
        pods=(
            PodGpuRequest(
                namespace="ml",
                name="p",
                uid="u",
                phase="Running",
                requests=(("nvidia.com/gpu", 1),),
            ),
        )
    )
    assert collectors._resources_of(parts, odd) == ["amd.com/gpu", "nvidia.com/gpu"]
