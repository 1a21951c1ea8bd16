"""The node agent's collectors, registered in one explicit tuple (STYLE S5.4), and their bindings.

Each entry turns the agent's parts (host files, static facts, NVML, the kubelet client, the REST
state) into a cycle Binding: what to collect, how often, where the result goes and which
families it renders. Config names the enabled collectors; unknown names fail at startup.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from lens.devices import gpu as gpu_families
from lens.devices import ib
from lens.devices.dri import DriCollector
from lens.devices.gpu import GpuCollection
from lens.devices.health import HealthTracker
from lens.devices.nvidia import NvidiaGpuCollector
from lens.devices.sources import NodeSources
from lens.kube.kubelet import allocation, ephemeral
from lens.kube.kubelet.allocation import GpuAllocation
from lens.kube.kubelet.client import KubeletClient
from lens.kube.kubelet.ephemeral import EphemeralStorage
from lens.roles.node_agent import holders
from lens.roles.node_agent.cycle import Binding, CollectorMetrics, Rendered
from lens.roles.node_agent.holders import HolderBoard
from lens.roles.node_agent.state import AgentState, Latest
from lens.runtime import errors
from lens.runtime.config import NodeAgentConfig
from lens.runtime.families import FamilyGroup, check_groups, describe
from lens.runtime.selfmetrics import FamilyDoc, SelfMetrics

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AgentParts:
    """Everything a collector entry may build its binding from."""

    config: NodeAgentConfig
    sources: NodeSources
    state: AgentState
    kubelet: Callable[[], KubeletClient]
    holders: HolderBoard


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CollectorEntry:
    """A collector: its name in config, its binding, and the families it renders (listed in
    docs/metrics.md under `section`, with collectors of the same section)."""

    name: str
    build: Callable[[AgentParts], Binding[Any]]
    section: str
    families: tuple[FamilyGroup[Any], ...] = ()
    hand_written: tuple[FamilyDoc, ...] = ()


def _bind(
    parts: AgentParts,
    *,
    name: str,
    interval: float,
    collect: Callable[[], T],
    render: Callable[[T], Iterable[Rendered]],
    into: Latest[T],
    **options: Any,
) -> Binding[T]:
    """A binding whose result goes to `into`, with a timeout never longer than its interval."""
    return Binding(
        name=name,
        interval_seconds=interval,
        timeout_seconds=min(parts.config.collector_timeout_seconds, interval),
        collect=collect,
        render=render,
        keep=into.keep,
        lose=into.lose,
        **options,
    )


def _gpu_renderer(parts: AgentParts) -> Callable[[GpuCollection], list[Rendered]]:
    """The GPUs' families, with the holders of each GPU as it was read."""

    def render(collection: GpuCollection) -> list[Rendered]:
        index = parts.holders.now()
        held = index.held_gpus(collection.gpus)
        if not parts.config.holder_labels:
            return [
                (gpu_families.FAMILIES, collection.gpus),
                (gpu_families.COMPAT_FAMILIES, collection.gpus),
                (holders.GPU_HOLDER_INFO, held),
            ]
        families, compat = index.gpu_groups()
        return [
            (families, collection.gpus),
            (compat, collection.gpus),
            (holders.GPU_HOLDER_INFO, held),
        ]

    return render


def _problems(collection: GpuCollection) -> Sequence[str]:
    return collection.problems


def _judged(parts: AgentParts) -> Callable[[GpuCollection], GpuCollection]:
    """The collection with each GPU's health (one tracker per collector: it remembers)."""
    tracker = HealthTracker(
        correctable_errors_per_hour=parts.config.gpu_correctable_errors_per_hour
    )

    def judge(collection: GpuCollection) -> GpuCollection:
        if not parts.config.gpu_health:
            return collection
        gpus = tracker.assess(collection.gpus, parts.state.time())
        return dataclasses.replace(collection, gpus=gpus)

    return judge


def _amdgpu(parts: AgentParts) -> Binding[GpuCollection]:
    collector = parts.sources.amd_collector()
    return _bind(
        parts,
        name=collector.name,
        interval=parts.config.gpu_interval_seconds,
        collect=collector.collect,
        render=_gpu_renderer(parts),
        into=parts.state.gpus["amd"],
        settle=_judged(parts),
        problems=_problems,
        applicable=lambda: parts.sources.vendors.present("amd"),
    )


def _nvidia(parts: AgentParts) -> Binding[GpuCollection]:
    def collect() -> GpuCollection:
        return parts.sources.nvidia().collect()

    judge = _judged(parts)

    def after_amd(collection: GpuCollection) -> GpuCollection:
        amd = parts.state.gpus["amd"].get()
        count = len(amd.value.gpus) if amd is not None else 0
        return judge(
            dataclasses.replace(
                collection, gpus=gpu_families.numbered_after(collection.gpus, count)
            )
        )

    return _bind(
        parts,
        name=NvidiaGpuCollector.name,
        interval=parts.config.gpu_interval_seconds,
        collect=collect,
        render=_gpu_renderer(parts),
        into=parts.state.gpus["nvidia"],
        settle=after_amd,
        problems=_problems,
        applicable=lambda: parts.sources.vendors.present("nvidia"),
    )


def _dri(parts: AgentParts) -> Binding[Any]:
    collector = DriCollector(parts.sources.host)
    return _bind(
        parts,
        name=collector.name,
        interval=parts.config.dri_interval_seconds,
        collect=collector.collect,
        render=lambda _: (),
        into=parts.state.dri,
        applicable=lambda: (
            parts.sources.vendors.present("amd") or parts.sources.vendors.present("nvidia")
        ),
    )


def _rdma_renderer(parts: AgentParts) -> Callable[[ib.RdmaSnapshot], list[Rendered]]:
    """The RDMA devices' and ports' families, each port with its device's holders."""

    def render(snapshot: ib.RdmaSnapshot) -> list[Rendered]:
        ports = snapshot.ports
        index = parts.holders.now()
        port_families = index.port_group() if parts.config.holder_labels else ib.PORT_FAMILIES
        return [
            (ib.DEVICE_FAMILIES, snapshot.devices),
            (port_families, ports),
            (holders.PORT_HOLDER_INFO, index.held_ports(ports)),
            ib.render_compat(ports),
        ]

    return render


def _rdma(parts: AgentParts) -> Binding[ib.RdmaSnapshot]:
    collector = parts.sources.rdma_collector(tool_fallback=parts.config.rdma_tool_fallback)
    return _bind(
        parts,
        name=collector.name,
        interval=parts.config.rdma_interval_seconds,
        collect=collector.collect,
        render=_rdma_renderer(parts),
        into=parts.state.rdma,
        problems=lambda snapshot: snapshot.problems,
    )


def _resources_of(parts: AgentParts, requested: GpuAllocation) -> list[str]:
    """Configured GPU resources worth a series here: asked for, or this node has the vendor."""
    totals = requested.by_resource()
    return [
        resource
        for resource in parts.config.gpu_resources
        if totals.get(resource)
        or (resource.startswith("amd.com/") and parts.sources.vendors.present("amd"))
        or (resource.startswith("nvidia.com/") and parts.sources.vendors.present("nvidia"))
    ]


def _kubelet(parts: AgentParts) -> Binding[GpuAllocation]:
    def collect() -> GpuAllocation:
        pods = parts.kubelet().get_json("/pods")
        return allocation.parse_pod_list(pods, parts.config.gpu_resources)

    def render(requested: GpuAllocation) -> list[Rendered]:
        resources = _resources_of(parts, requested)
        rendered: list[Rendered] = [
            (allocation.FAMILIES, allocation.requests_of(requested, resources))
        ]
        units = parts.state.gpu_units()
        if units:
            rate = allocation.AllocationRate(percent=100 * requested.requested() / units)
            rendered.append((allocation.COMPAT_FAMILIES, [rate]))
        return rendered

    return _bind(
        parts,
        name="kubelet",
        interval=parts.config.kubelet_interval_seconds,
        collect=collect,
        render=render,
        into=parts.state.allocation,
    )


def _render_storage(storage: EphemeralStorage) -> list[Rendered]:
    root = storage.root()
    nodes = [] if root is None else [ephemeral.NodeStorage(node=storage.node, usage=root)]
    pods = [ephemeral.CompatPodStorage(node=storage.node, pod=pod) for pod in storage.pods]
    return [
        (ephemeral.NODE_FS_FAMILIES, storage.filesystems),
        (ephemeral.POD_FAMILIES, storage.pods),
        (ephemeral.COMPAT_NODE_FAMILIES, nodes),
        (ephemeral.COMPAT_POD_FAMILIES, pods),
    ]


def _ephemeral_storage(parts: AgentParts) -> Binding[EphemeralStorage]:
    return _bind(
        parts,
        name="ephemeral_storage",
        interval=parts.config.kubelet_interval_seconds,
        collect=lambda: ephemeral.parse_summary(parts.kubelet().get_json("/stats/summary")),
        render=_render_storage,
        into=parts.state.storage,
    )


# As docs/metrics.md lists them: with holder labels, the default (the same names without).
_GPU_FAMILIES = (holders.GPU_FAMILIES, holders.GPU_COMPAT_FAMILIES, holders.GPU_HOLDER_INFO)
_KUBELET_FAMILIES = (allocation.FAMILIES, allocation.COMPAT_FAMILIES)
_STORAGE_FAMILIES = (
    ephemeral.NODE_FS_FAMILIES,
    ephemeral.POD_FAMILIES,
    ephemeral.COMPAT_NODE_FAMILIES,
    ephemeral.COMPAT_POD_FAMILIES,
)

COLLECTORS: tuple[CollectorEntry, ...] = (
    CollectorEntry(name="amdgpu", build=_amdgpu, section="GPUs", families=_GPU_FAMILIES),
    CollectorEntry(name="nvidia", build=_nvidia, section="GPUs", families=_GPU_FAMILIES),
    CollectorEntry(name="dri", build=_dri, section="DRI"),
    CollectorEntry(
        name="rdma",
        build=_rdma,
        section="RDMA",
        families=(ib.DEVICE_FAMILIES, holders.PORT_FAMILIES, holders.PORT_HOLDER_INFO),
        hand_written=(ib.COMPAT_DOC,),
    ),
    CollectorEntry(name="kubelet", build=_kubelet, section="kubelet", families=_KUBELET_FAMILIES),
    CollectorEntry(
        name="ephemeral_storage",
        build=_ephemeral_storage,
        section="kubelet",
        families=_STORAGE_FAMILIES,
    ),
)
KUBELET_COLLECTORS = frozenset({"kubelet", "ephemeral_storage"})


def check_names(enabled: Sequence[str]) -> None:
    """ConfigError naming the valid collectors when `enabled` lists an unknown one."""
    known = [entry.name for entry in COLLECTORS]
    unknown = [name for name in enabled if name not in known]
    if unknown:
        raise errors.ConfigError(
            source="config",
            key="node_agent.collectors",
            expected=f"collector names from {', '.join(known)} (unknown: {', '.join(unknown)})",
        )


def bindings(parts: AgentParts, enabled: Sequence[str]) -> list[Binding[Any]]:
    """The bindings of the enabled collectors, in registry order (GPUs before the kubelet)."""
    check_names(enabled)
    return [entry.build(parts) for entry in COLLECTORS if entry.name in enabled]


def _family_groups(entries: Iterable[CollectorEntry]) -> list[FamilyGroup[Any]]:
    """The family groups of `entries`, each once (collectors of one section share some)."""
    groups: dict[int, FamilyGroup[Any]] = {}
    for entry in entries:
        for group in entry.families:
            groups.setdefault(id(group), group)
    return list(groups.values())


def metric_docs() -> list[tuple[str, list[FamilyDoc]]]:
    """docs/metrics.md sections of the node agent: every family its collectors export."""
    own = SelfMetrics(process=False)
    CollectorMetrics(own)
    sections: list[tuple[str, list[FamilyDoc]]] = [("Node agent: collectors", list(own.declared))]
    for section in dict.fromkeys(entry.section for entry in COLLECTORS):
        entries = [entry for entry in COLLECTORS if entry.section == section]
        docs = describe(_family_groups(entries))
        docs += [doc for entry in entries for doc in entry.hand_written]
        if docs:
            names = ", ".join(entry.name for entry in entries)
            sections.append((f"Node agent: {section} ({names})", docs))
    return sections


def family_names() -> list[str]:
    """Every family name the collectors render, checked: none badly named or declared twice
    (STYLE S6.7), so a process whose roles share one registry can claim them at start."""
    groups = _family_groups(COLLECTORS)
    check_groups(groups)
    names = [doc.name for doc in describe(groups)]
    return names + [doc.name for entry in COLLECTORS for doc in entry.hand_written]
