"""Who holds each GPU and RDMA device now, as labels on the device's series at scrape time.

The vendors' exporters (dcgm-exporter, AMD's device-metrics-exporter) put `pod`, `namespace`
and `container` on every GPU series; the agent does the same from its own container tracking,
so a Prometheus scraping it needs no remote-write round trip to know a GPU's holder. A device
held by several containers keeps one set, its longest holder's (the earliest created), and
`holders` counts them, so a sum over pods counts each device once; the `*_holder_info`
families list every holder. With `node_agent.holder_labels` off only those families are
rendered, for whoever joins on them instead (docs/metrics.md: series churn).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

from lens.containers.model import STATUS_AFTER, Container, EventType
from lens.devices import gpu, ib
from lens.devices.gpu import GpuSnapshot
from lens.devices.ib import RdmaPort
from lens.runtime.families import FamilyGroup, Sample, labelled, spec

D = TypeVar("D")

HOLDER_LABELS = ("pod", "namespace", "container", "holders")
_ENDED = frozenset(
    STATUS_AFTER[e] for e in (EventType.EXITED, EventType.OOM_KILLED, EventType.DELETED)
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Holder:
    """A container holding a device, as its series name it."""

    namespace: str
    pod: str
    container: str
    since: float  # the container's creation (epoch seconds): the longest holder is the first
    container_id: str


@dataclasses.dataclass(frozen=True, slots=True)
class Held(Generic[D]):
    """A device's reading with the containers holding the device when it was read, longest
    holder first."""

    device: D
    holders: tuple[Holder, ...] = ()

    def labels(self) -> tuple[str, ...]:
        """`pod`, `namespace`, `container` of the longest holder (empty: free) and `holders`."""
        if not self.holders:
            return ("", "", "", "0")
        first = self.holders[0]
        return (first.pod, first.namespace, first.container, str(len(self.holders)))


def _holding_now(container: Container) -> bool:
    return container.exited_at is None and container.status not in _ENDED


def _holder(container: Container) -> Holder:
    pod = container.pod
    return Holder(
        namespace=pod.namespace if pod else "",
        pod=pod.name if pod else "",
        container=container.name,
        since=container.created_at,
        container_id=container.id,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class HolderIndex:
    """The holders of each GPU (by UUID) and RDMA device (by name) at one moment."""

    gpus: dict[str, tuple[Holder, ...]]
    rdma: dict[str, tuple[Holder, ...]]

    @classmethod
    def of(cls, containers: Iterable[Container]) -> HolderIndex:
        gpus: dict[str, list[Holder]] = {}
        rdma: dict[str, list[Holder]] = {}
        for container in containers:
            if not container.devices or not _holding_now(container):
                continue
            holder = _holder(container)
            for device in container.devices:
                if device.type == "gpu":
                    gpus.setdefault(device.uuid, []).append(holder)
                else:
                    rdma.setdefault(device.name, []).append(holder)
        return cls(gpus=_longest_first(gpus), rdma=_longest_first(rdma))

    def held_gpus(self, gpus: Sequence[GpuSnapshot]) -> list[Held[GpuSnapshot]]:
        return [Held(g, self.gpus.get(g.uuid, ())) for g in gpus]

    def held_ports(self, ports: Sequence[RdmaPort]) -> list[Held[RdmaPort]]:
        return [Held(p, self.rdma.get(p.device, ())) for p in ports]


def _longest_first(found: dict[str, list[Holder]]) -> dict[str, tuple[Holder, ...]]:
    return {
        key: tuple(sorted(holders, key=lambda h: (h.since, h.container_id)))
        for key, holders in found.items()
    }


class HolderBoard:
    """The holders now, from container tracking once it is attached (none before: the agent
    collects before it follows containers, and without a container runtime it never does)."""

    def __init__(self) -> None:
        self._containers: Callable[[], Sequence[Container]] | None = None
        self._lock = threading.Lock()

    def attach(self, containers: Callable[[], Sequence[Container]]) -> None:
        with self._lock:
            self._containers = containers

    def now(self) -> HolderIndex:
        with self._lock:
            containers = self._containers
        return HolderIndex.of(containers() if containers is not None else ())


def _holder_samples(held: Held[D]) -> list[Sample]:
    return [((h.pod, h.namespace, h.container), 1.0) for h in held.holders]


def _inner(held: Held[D]) -> D:
    return held.device


def _holder_info(group: FamilyGroup[D], name: str, what: str) -> FamilyGroup[Held[D]]:
    identity = group.identity
    return FamilyGroup(
        identity_labels=group.identity_labels,
        identity=lambda held: identity(held.device),
        specs=(
            spec(
                name,
                f"A container holding the {what} now, one sample per holder; the value is "
                "always 1.",
                "info",
                ("pod", "namespace", "container"),
                samples=_holder_samples,
            ),
        ),
    )


def _with_holders(group: FamilyGroup[D]) -> FamilyGroup[Held[D]]:
    return labelled(group, HOLDER_LABELS, inner=_inner, values=Held.labels)


GPU_FAMILIES = _with_holders(gpu.FAMILIES)
GPU_COMPAT_FAMILIES = _with_holders(gpu.COMPAT_FAMILIES)
GPU_HOLDER_INFO = _holder_info(gpu.FAMILIES, "lens_gpu_holder_info", "GPU")
PORT_FAMILIES = _with_holders(ib.PORT_FAMILIES)
PORT_HOLDER_INFO = _holder_info(ib.PORT_FAMILIES, "lens_ib_port_holder_info", "RDMA port's device")
