"""A GPU-aware scheduler for simulated clusters: best fit on free GPUs, lost nodes excluded.

player.py asks it where each new pod goes; a pod that fits nowhere stays Pending, as it would
with the real scheduler and device plugins.
"""

from __future__ import annotations


class Scheduler:
    def __init__(self, capacity: dict[str, int]) -> None:
        self._capacity = dict(capacity)
        self._free = dict(capacity)
        self._down: set[str] = set()
        self._placed: dict[str, tuple[str, int]] = {}  # pod key -> (node, gpus)

    def place(self, pod: str, gpus: int) -> str | None:
        """The node the pod goes to (its GPUs are taken), or None when nothing fits."""
        candidates = [n for n, free in self._free.items() if n not in self._down and free >= gpus]
        if not candidates:
            return None
        # Best fit keeps whole nodes free for 8-GPU training pods; ties go to the first name.
        chosen = min(candidates, key=lambda n: (self._free[n] - gpus, n))
        self._free[chosen] -= gpus
        self._placed[pod] = (chosen, gpus)
        return chosen

    def release(self, pod: str) -> None:
        placed = self._placed.pop(pod, None)
        if placed is not None:
            node, gpus = placed
            self._free[node] += gpus

    def node_down(self, node: str) -> None:
        self._down.add(node)

    def free(self, node: str) -> int:
        return self._free[node]

    def pods_on(self, node: str) -> list[str]:
        return [pod for pod, (where, _) in self._placed.items() if where == node]
