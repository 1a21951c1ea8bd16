"""The device-plugin side of a simulated kubelet: which device ids each container was given.

Device ids follow the real plugins (shared/formats/kubelet.md section 4): the GPU's PCI address
for `amd.com/gpu` (ROCm/k8s-device-plugin), the GPU UUID for `nvidia.com/gpu`. A container is
given devices by its limits when its pod is first seen on the node, init containers first, and
app containers reuse what init containers held, as the kubelet's device manager does.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping, Sequence
from typing import Any

JsonObject = dict[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class Device:
    id: str
    numa_node: int


@dataclasses.dataclass(frozen=True, slots=True)
class Assignment:
    container: str
    resource: str
    devices: tuple[Device, ...]


def _quantity(value: object) -> int:
    text = str(value)
    return int(text) if text.isdigit() else 0


class DeviceAllocator:
    """Devices per resource name, and which pod's containers hold them."""

    def __init__(self, inventory: Mapping[str, Sequence[Device]]) -> None:
        self._inventory = {name: tuple(devices) for name, devices in inventory.items()}
        self._held: dict[str, list[Assignment]] = {}
        self._lock = threading.Lock()

    @property
    def inventory(self) -> dict[str, tuple[Device, ...]]:
        return dict(self._inventory)

    def assignments(self, pod: JsonObject) -> list[Assignment]:
        """The pod's assignments, made now if this is the first time the pod is seen."""
        uid = pod["metadata"]["uid"]
        with self._lock:
            if uid not in self._held:
                self._held[uid] = self._assign(pod)
            return list(self._held[uid])

    def release(self, uids: set[str]) -> None:
        """Give back the devices of pods that are gone or finished."""
        with self._lock:
            for uid in list(self._held):
                if uid in uids:
                    del self._held[uid]

    def known(self) -> set[str]:
        with self._lock:
            return set(self._held)

    def _free(self, resource: str) -> list[Device]:
        taken = {
            d.id
            for held in self._held.values()
            for a in held
            if a.resource == resource
            for d in a.devices
        }
        return [d for d in self._inventory.get(resource, ()) if d.id not in taken]

    def _assign(self, pod: JsonObject) -> list[Assignment]:
        spec = pod.get("spec") or {}
        made: list[Assignment] = []
        init_held: dict[str, list[Device]] = {}
        for kind in ("initContainers", "containers"):
            for container in spec.get(kind) or []:
                limits = (container.get("resources") or {}).get("limits") or {}
                for resource, amount in limits.items():
                    if resource not in self._inventory:
                        continue
                    wanted = _quantity(amount)
                    reuse = init_held.get(resource, []) if kind == "containers" else []
                    taken_now = {d.id for a in made for d in a.devices if a.resource == resource}
                    pool = [d for d in reuse] + [
                        d for d in self._free(resource) if d.id not in taken_now
                    ]
                    chosen = tuple(pool[:wanted])
                    made.append(Assignment(container["name"], resource, chosen))
                    if kind == "initContainers":
                        init_held.setdefault(resource, []).extend(chosen)
        return made
