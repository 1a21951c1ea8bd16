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

from lens.containers.model import STATUS_AFTER, Container, Device, EventType
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
        return holder_labels(self.holders)


FREE = ("", "", "", "0")


def holder_labels(holders: tuple[Holder, ...]) -> tuple[str, ...]:
    """`pod`, `namespace`, `container` of the longest holder (empty: free) and `holders`."""
    if not holders:
        return FREE
    first = holders[0]
    return (first.pod, first.namespace, first.container, str(len(holders)))


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

    def gpu_groups(self) -> tuple[FamilyGroup[GpuSnapshot], FamilyGroup[GpuSnapshot]]:
        """The GPU families (Lens's, the original's) naming each GPU's holders now."""

        def values(g: GpuSnapshot) -> tuple[str, ...]:
            return holder_labels(self.gpus.get(g.uuid, ()))

        return (
            labelled(gpu.FAMILIES, HOLDER_LABELS, values=values),
            labelled(gpu.COMPAT_FAMILIES, HOLDER_LABELS, values=values),
        )

    def port_group(self) -> FamilyGroup[RdmaPort]:
        """The RDMA port families naming the holders of each port's device now."""

        def values(p: RdmaPort) -> tuple[str, ...]:
            return holder_labels(self.rdma.get(p.device, ()))

        return labelled(ib.PORT_FAMILIES, HOLDER_LABELS, values=values)


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
        self._index = HolderIndex(gpus={}, rdma={})
        self._key: tuple[tuple[str, str, float | None, tuple[Device, ...]], ...] = ()

    def attach(self, containers: Callable[[], Sequence[Container]]) -> None:
        with self._lock:
            self._containers = containers

    def now(self) -> HolderIndex:
        """The index of the containers followed now, built again only when they changed
        (a container came, went or ended, or its devices were learnt)."""
        with self._lock:
            containers = self._containers() if self._containers is not None else ()
            key = tuple((c.id, c.status, c.exited_at, c.devices) for c in containers)
            if key != self._key:
                self._index, self._key = HolderIndex.of(containers), key
            return self._index


def _holder_samples(held: Held[D]) -> list[Sample]:
    return [((h.pod, h.namespace, h.container), 1.0) for h in held.holders]


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


def _free(_device: object) -> tuple[str, ...]:
    return FREE


# As docs/metrics.md lists them; a render builds its own (HolderIndex.gpu_groups, port_group).
GPU_FAMILIES = labelled(gpu.FAMILIES, HOLDER_LABELS, values=_free)
GPU_COMPAT_FAMILIES = labelled(gpu.COMPAT_FAMILIES, HOLDER_LABELS, values=_free)
GPU_HOLDER_INFO = _holder_info(gpu.FAMILIES, "lens_gpu_holder_info", "GPU")
PORT_FAMILIES = labelled(ib.PORT_FAMILIES, HOLDER_LABELS, values=_free)
PORT_HOLDER_INFO = _holder_info(ib.PORT_FAMILIES, "lens_ib_port_holder_info", "RDMA port's device")
