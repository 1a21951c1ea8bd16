"""The device plugin of a played scenario's kubelets: a pod is given the very GPUs the scenario's
scheduler chose for it (truth.py), so pod-resources, the host tree's loads and the truth agree.

player.py puts a TruthAllocator in each kubelet it builds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lens.sim.kubelet.devices import Assignment, Device, DeviceAllocator
from lens.sim.scenario.truth import Truth

JsonObject = dict[str, Any]


class TruthAllocator(DeviceAllocator):
    """Devices per resource name as the kubelet's, each pod's GPUs as the truth holds them."""

    def __init__(
        self, inventory: Mapping[str, Sequence[Device]], *, truth: Truth, node: str
    ) -> None:
        super().__init__(inventory)
        self._truth = truth
        self._node = node

    def _assign(self, pod: JsonObject) -> list[Assignment]:
        """The pod's GPUs (by index into each resource's inventory), handed to its containers
        in order of their limits; a pod the truth does not know gets what DeviceAllocator
        would give it."""
        uid = pod["metadata"]["uid"]
        hold = next((h for h in self._truth.holds if h.pod_uid == uid), None)
        if hold is None or hold.node != self._node:
            return super()._assign(pod)
        made: list[Assignment] = []
        given = list(hold.gpus)
        for container in (pod.get("spec") or {}).get("containers") or []:
            limits = (container.get("resources") or {}).get("limits") or {}
            for resource, amount in limits.items():
                devices = self.inventory.get(resource)
                if not devices:
                    continue
                wanted = int(str(amount)) if str(amount).isdigit() else 0
                chosen, given = given[:wanted], given[wanted:]
                made.append(
                    Assignment(container["name"], resource, tuple(devices[i] for i in chosen))
                )
        return made
