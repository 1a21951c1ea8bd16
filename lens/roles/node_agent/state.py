"""What the node agent last collected, for its REST API: last good results with their time.

The cycle's bindings `keep` each successful result here and `lose` on failure, so the REST
views can tell fresh readings (served only while their collector succeeds) from inventory
(GPUs, RDMA devices: the last good one is served, with its age). Thread-safe: the cycle writes
while HTTP threads read.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from lens.devices.dri import DriMapping
from lens.devices.gpu import GpuCollection, GpuSnapshot, Vendor
from lens.devices.ib import RdmaSnapshot
from lens.kube.kubelet.allocation import GpuAllocation
from lens.kube.kubelet.ephemeral import EphemeralStorage

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class Observed(Generic[T]):
    """A collector's last good result, when it was read, and whether the last run failed."""

    value: T
    at: float
    failure: str | None = None

    @property
    def fresh(self) -> bool:
        return self.failure is None


class Latest(Generic[T]):
    """One collector's last good result, replaced on success and marked on failure."""

    def __init__(self, wall_time: Callable[[], float]) -> None:
        self._time = wall_time
        self._lock = threading.Lock()
        self._observed: Observed[T] | None = None

    def keep(self, value: T) -> None:
        with self._lock:
            self._observed = Observed(value, self._time())

    def lose(self, reason: str) -> None:
        with self._lock:
            if self._observed is not None:
                self._observed = dataclasses.replace(self._observed, failure=reason)

    def get(self) -> Observed[T] | None:
        with self._lock:
            return self._observed


class AgentState:
    """The latest result of each collector."""

    def __init__(self, wall_time: Callable[[], float]) -> None:
        self.time = wall_time
        self.gpus: dict[Vendor, Latest[GpuCollection]] = {
            "amd": Latest(wall_time),
            "nvidia": Latest(wall_time),
        }
        self.dri: Latest[DriMapping] = Latest(wall_time)
        self.rdma: Latest[RdmaSnapshot] = Latest(wall_time)
        self.allocation: Latest[GpuAllocation] = Latest(wall_time)
        self.storage: Latest[EphemeralStorage] = Latest(wall_time)

    def known_gpus(self) -> list[tuple[GpuSnapshot, Observed[GpuCollection]]]:
        """Every GPU of the last good collections, AMD first, each with its collection."""
        found: list[tuple[GpuSnapshot, Observed[GpuCollection]]] = []
        for latest in self.gpus.values():
            observed = latest.get()
            if observed is not None:
                found.extend((gpu, observed) for gpu in observed.value.gpus)
        return found

    def gpu_units(self) -> int | None:
        """GPUs as device plugins count them (each compute partition is one); None: unknown."""
        gpus = self.known_gpus()
        if not gpus:
            return None
        dri = self.dri.get()
        units = 0
        for gpu, _observed in gpus:
            nodes = dri.value.of_gpu(gpu.pci_bus_id) if dri is not None else ()
            units += max(1, len(nodes))
        return units
