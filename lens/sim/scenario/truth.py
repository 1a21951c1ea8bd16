"""The truth a played scenario enacted: which pod held which GPUs of which node from when to when,
and how busy each GPU was — recorded by the player (pods.py) as it plays. A GPU's load is its
holder's workload profile (loads.py) while a pod holds it, else 0; host trees read it (GpuLoad).
figures.py works Lens's figures out from it, never from what Lens stored.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping

from lens.sim.hosts import profiles
from lens.sim.hosts.profiles import Profile

MINUTE = 60
# How a hold ended: its pod finished (succeeded or failed), was deleted, or its node was lost.
FINISHED, FAILED, DELETED, NODE_LOST = "finished", "failed", "deleted", "node-lost"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadRef:
    """A pod's top-level workload; a pod without an owner is its own (kind Pod)."""

    kind: str
    name: str
    namespace: str
    uid: str
    team: str = ""  # its team label (spec.TEAM_LABEL); a bare pod's is ''

    @property
    def key(self) -> tuple[str, str, str]:
        """(namespace, kind, name): which of the scenario's workloads it is."""
        return (self.namespace, self.kind, self.name)


@dataclasses.dataclass(slots=True, kw_only=True)
class Hold:
    """A pod bound to `node` holding its GPUs (indices of the node's host tree) from `since`
    until `until` (None: still held); `running_until` is when the pod stopped running (finished
    or deleted), which a lost node does not end."""

    pod_uid: str
    namespace: str
    pod_name: str
    workload: WorkloadRef
    node: str
    gpus: tuple[int, ...]
    since: float
    until: float | None = None
    running_until: float | None = None
    ended_by: str = ""

    def held_seconds(self, start: float, end: float) -> float:
        """How long within [start, end) the pod held its GPUs (each of them)."""
        until = end if self.until is None else min(self.until, end)
        return max(0.0, until - max(self.since, start))

    def holds_at(self, at: float) -> bool:
        return self.since <= at and (self.until is None or at < self.until)

    def runs_at(self, at: float) -> bool:
        return self.since <= at and (self.running_until is None or at < self.running_until)


class Truth:
    """Every hold of a scenario as played, and the GPUs' loads that follow from them."""

    def __init__(
        self, capacity: Mapping[str, int], loads: Mapping[tuple[str, str, str], Profile]
    ) -> None:
        """`capacity`: GPUs per node; `loads`: each workload's profile by (namespace, kind,
        name), a workload missing from it idle."""
        self.capacity = dict(capacity)
        self._loads = dict(loads)
        self._holds: list[Hold] = []
        self._open: dict[tuple[str, str], Hold] = {}  # (namespace, pod name) -> its open hold
        self._by_gpu: dict[tuple[str, int], list[Hold]] = defaultdict(list)
        self.lost: dict[str, float] = {}  # node -> when it was lost

    # -- recording (the player) -----------------------------------------------------------

    def bind(
        self,
        *,
        pod_uid: str,
        namespace: str,
        pod_name: str,
        workload: WorkloadRef,
        node: str,
        gpus: tuple[int, ...],
        at: float,
    ) -> Hold:
        """A pod bound to `node` at `at`, given the GPUs `gpus` (none: it holds no GPU)."""
        hold = Hold(
            pod_uid=pod_uid,
            namespace=namespace,
            pod_name=pod_name,
            workload=workload,
            node=node,
            gpus=gpus,
            since=at,
        )
        self._holds.append(hold)
        self._open[(namespace, pod_name)] = hold
        for index in gpus:
            self._by_gpu[(node, index)].append(hold)
        return hold

    def end(self, namespace: str, pod_name: str, *, at: float, how: str) -> None:
        """The pod stopped running (finished, failed or deleted) at `at`: its GPUs are free."""
        hold = self._open.pop((namespace, pod_name), None)
        if hold is None:
            return
        hold.running_until = at
        if hold.until is None:
            hold.until, hold.ended_by = at, how

    def lose_node(self, node: str, *, at: float) -> None:
        """The node was lost at `at`: its GPUs are gone with it, its pods count as running
        until they are deleted."""
        self.lost.setdefault(node, at)
        for hold in self._open.values():
            if hold.node == node and hold.until is None:
                hold.until, hold.ended_by = at, NODE_LOST

    # -- reading --------------------------------------------------------------------------

    @property
    def holds(self) -> tuple[Hold, ...]:
        return tuple(self._holds)

    def holds_on(self, node: str, index: int) -> tuple[Hold, ...]:
        """The holds of one GPU, in the order they began."""
        return tuple(self._by_gpu.get((node, index), ()))

    def holder(self, node: str, index: int, at: float) -> Hold | None:
        for hold in self._by_gpu.get((node, index), ()):
            if hold.holds_at(at):
                return hold
        return None

    def profile_of(self, workload: WorkloadRef) -> Profile:
        return self._loads.get(workload.key, profiles.Idle())

    def load(self, node: str, index: int, at: float) -> float:
        """The GPU's utilization (percent) at `at`, in whole percent as its readings show it."""
        hold = self.holder(node, index, at)
        if hold is None:
            return 0.0
        return float(round(self.profile_of(hold.workload).utilization(at) / 100 * 100))

    def gpu_profile(self, node: str, index: int) -> GpuLoad:
        """A profile for the host tree's GPU `index` of `node`: the load it was given."""
        return GpuLoad(self, node, index)

    def minute_mean(self, node: str, index: int, minute: int) -> float:
        """The GPU's mean utilization (ratio) over the minute from `minute`, read once a
        second as an agent at its default interval reads it (whole seconds, whole percent)."""
        total = 0.0
        for start, end, hold in self._segments(node, index, minute):
            if hold is None:
                continue
            total += _sum_per_second(self.profile_of(hold.workload), start, end)
        return total / MINUTE / 100

    def _segments(
        self, node: str, index: int, minute: int
    ) -> Iterable[tuple[int, int, Hold | None]]:
        """[start, end) whole-second stretches of the minute, each with its one holder (None:
        held by no pod); a second belongs to whoever holds the GPU at its beginning."""
        end = minute + MINUTE
        holds = [h for h in self._by_gpu.get((node, index), ()) if h.held_seconds(minute, end)]
        cuts = {minute, end}
        for hold in holds:
            cuts.update(
                math.ceil(t) for t in (hold.since, hold.until) if t is not None and minute < t < end
            )
        ordered = sorted(cuts)
        for start, stop in itertools.pairwise(ordered):
            yield start, stop, next((h for h in holds if h.holds_at(start)), None)


class GpuLoad:
    """The load of one GPU of a played scenario, as a host tree's profile (profiles.Profile)."""

    def __init__(self, truth: Truth, node: str, index: int) -> None:
        self._truth, self._node, self._index = truth, node, index

    def utilization(self, t: float) -> float:
        return self._truth.load(self._node, self._index, t)


def _sum_per_second(profile: Profile, start: int, end: int) -> float:
    """The sum of the profile's whole-percent readings at each second of [start, end); a
    Stepped profile is read once per step it crosses."""
    step = profile.step_seconds if isinstance(profile, profiles.Stepped) else 1.0
    if step < 1 or step % 1:
        step = 1.0
    total = 0.0
    second = start
    while second < end:
        stop = min(end, int((math.floor(second / step) + 1) * step))
        total += round(profile.utilization(second) / 100 * 100) * (stop - second)
        second = stop
    return total
