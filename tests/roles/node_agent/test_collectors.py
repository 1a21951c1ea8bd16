"""The collector registry: names checked at startup, bindings per config, families documented."""

from __future__ import annotations

import pytest

from lens.devices.sources import node_sources
from lens.kube.kubelet.allocation import GpuAllocation, PodGpuRequest
from lens.kube.kubelet.client import KubeletClient
from lens.roles.node_agent import collectors
from lens.roles.node_agent.holders import HolderBoard
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
    names = collectors.family_names()
    assert len(names) == len(set(names))
    documented = {doc.name for _, docs in collectors.metric_docs() for doc in docs}
    assert set(names) <= documented
    assert {"lens_gpu_info", "gpu_utilization", "node_k8s_gpu_allocation_rate"} <= documented
    assert {"rdma_stat_<counter>", "lens_collector_success"} <= documented


def test_every_collector_is_listed_once_with_its_families() -> None:
    sections = [title for title, _ in collectors.metric_docs()]
    assert sections == [
        "Node agent: collectors",
        "Node agent: GPUs (amdgpu, nvidia)",
        "Node agent: RDMA (rdma)",
        "Node agent: kubelet (kubelet, ephemeral_storage)",
    ]


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
    sources = node_sources(HostConfig(root=str(mi300x.root)), wall_time=lambda: 0.0)
    sources.vendors.refresh()
    parts = collectors.AgentParts(
        config=NodeAgentConfig(),
        sources=sources,
        state=agent.state,
        kubelet=lambda: KubeletClient(KubeletConfig(url="https://127.0.0.1:1")),
        holders=HolderBoard(),
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
