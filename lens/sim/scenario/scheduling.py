"""A GPU-aware scheduler for simulated clusters: best fit on free GPUs, lost nodes excluded.

player.py asks it where each new pod goes, and which of the node's GPUs (by index) the device
plugin gives it: the lowest free ones. A pod that fits nowhere stays Pending, as it would with
the real scheduler and device plugins.
"""

from __future__ import annotations


class Scheduler:
    def __init__(self, capacity: dict[str, int]) -> None:
        self._free_gpus = {node: list(range(gpus)) for node, gpus in capacity.items()}
        self._down: set[str] = set()
        self._placed: dict[str, tuple[str, tuple[int, ...]]] = {}  # pod key -> (node, GPUs)

    def place(self, pod: str, gpus: int) -> str | None:
        """The node the pod goes to (its GPUs are taken), or None when nothing fits."""
        candidates = [
            n for n, free in self._free_gpus.items() if n not in self._down and len(free) >= gpus
        ]
        if not candidates:
            return None
        # Best fit keeps whole nodes free for 8-GPU training pods; ties go to the first name.
        chosen = min(candidates, key=lambda n: (len(self._free_gpus[n]) - gpus, n))
        free = self._free_gpus[chosen]
        taken, self._free_gpus[chosen] = tuple(free[:gpus]), free[gpus:]
        self._placed[pod] = (chosen, taken)
        return chosen

    def gpus_of(self, pod: str) -> tuple[int, ...]:
        """The indices of the GPUs the pod was given on its node (none when not placed)."""
        placed = self._placed.get(pod)
        return placed[1] if placed is not None else ()

    def release(self, pod: str) -> None:
        placed = self._placed.pop(pod, None)
        if placed is not None:
            node, taken = placed
            self._free_gpus[node] = sorted([*self._free_gpus[node], *taken])

    def node_down(self, node: str) -> None:
        self._down.add(node)

    def free(self, node: str) -> int:
        return len(self._free_gpus[node])

    def pods_on(self, node: str) -> list[str]:
        return [pod for pod, (where, _) in self._placed.items() if where == node]
