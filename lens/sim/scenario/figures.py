"""The figures Lens reports of a cluster, worked out from a played scenario's truth (truth.py) by
the definitions of docs/jobs.md: allocation, GPU-hours per workload, namespace and team,
consumers and idle GPUs. A GPU-minute's utilization is the GPU's mean over the whole minute,
held or not, as an agent reports it; used GPU-hours and consumers weigh it by the seconds each
pod held the GPU.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterator

from lens.sim.scenario.truth import MINUTE, Hold, Truth, WorkloadRef

WORKLOAD, NAMESPACE, TEAM = "workload", "namespace", "team"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuSeconds:
    """A group's GPU-seconds over a range: held, and used (weighted by utilization)."""

    held: float
    used: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Consumer:
    """A top-level workload with running GPU pods at a moment."""

    workload: WorkloadRef
    gpus_allocated: int
    active_pods: int
    utilization_ratio: float | None  # None: none of its pods' GPU-minutes in the window


@dataclasses.dataclass(frozen=True, slots=True)
class IdleMinute:
    """A minute of a GPU held by a pod within one of its idle intervals."""

    node: str
    gpu: int  # the GPU's index on its node
    pod_uid: str
    minute: int  # the minute's start, epoch seconds


class Figures:
    """What Lens should report of `truth`; GPU-minute means are worked out once each."""

    def __init__(self, truth: Truth) -> None:
        self.truth = truth
        self._means: dict[tuple[str, int, int], float] = {}

    def gpu_minute(self, node: str, index: int, minute: int) -> float:
        key = (node, index, minute)
        if key not in self._means:
            self._means[key] = self.truth.minute_mean(node, index, minute)
        return self._means[key]

    # -- allocation -----------------------------------------------------------------------

    def node_allocation(self, at: float) -> dict[str, int]:
        """GPUs allocated on each node at `at`: held by pods bound to it and not finished; a
        lost node none (its pods' GPUs went with it)."""
        allocated = dict.fromkeys(self.truth.capacity, 0)
        for hold in self.truth.holds:
            if hold.holds_at(at):
                allocated[hold.node] += len(hold.gpus)
        return allocated

    def allocation_rate(self, at: float) -> float:
        """Percent of the cluster's GPUs allocated at `at` (a lost node keeps its capacity)."""
        capacity = sum(self.truth.capacity.values())
        allocated = sum(self.node_allocation(at).values())
        return 100.0 * allocated / capacity if capacity else 0.0

    # -- GPU-hours ------------------------------------------------------------------------

    def gpu_seconds(self, start: int, end: int, *, by: str) -> dict[str, GpuSeconds]:
        """Per top-level workload (uid), namespace or team (its top-level workload's team
        label, '' for none), the GPU-seconds held and used within [start, end), both whole
        minutes."""
        keys = {
            WORKLOAD: lambda hold: hold.workload.uid,
            NAMESPACE: lambda hold: hold.namespace,
            TEAM: lambda hold: hold.workload.team,
        }
        if by not in keys:
            raise ValueError(f"group by {WORKLOAD}, {NAMESPACE} or {TEAM}, not {by!r}")
        held: dict[str, float] = defaultdict(float)
        used: dict[str, float] = defaultdict(float)
        for hold in self.truth.holds:
            key = keys[by](hold)
            for index, minute, seconds in self._held_minutes(hold, start, end):
                held[key] += seconds
                used[key] += seconds * self.gpu_minute(hold.node, index, minute)
        return {key: GpuSeconds(held=held[key], used=used[key]) for key in held}

    def _held_minutes(self, hold: Hold, start: int, end: int) -> Iterator[tuple[int, int, float]]:
        """(GPU index, minute, seconds held in it) of each GPU-minute of `hold` in [start, end)."""
        first = max(start, _minute_of(hold.since))
        last = end if hold.until is None else min(end, hold.until)
        for minute in range(first, math.ceil(last), MINUTE):
            seconds = hold.held_seconds(minute, minute + MINUTE)
            if seconds > 0:
                for index in hold.gpus:
                    yield index, minute, seconds

    # -- consumers ------------------------------------------------------------------------

    def consumers(self, at: int, *, window_minutes: int) -> dict[str, Consumer]:
        """Per top-level workload (uid) with GPU pods running at `at` (a whole minute): GPUs
        and pods, and the utilization of the GPU-minutes those pods held in the last
        `window_minutes`, weighted by the seconds held."""
        members: dict[str, list[Hold]] = defaultdict(list)
        for hold in self.truth.holds:
            if hold.gpus and hold.runs_at(at):
                members[hold.workload.uid].append(hold)
        return {
            uid: self._consumer(holds, at - window_minutes * MINUTE, at)
            for uid, holds in members.items()
        }

    def _consumer(self, holds: list[Hold], start: int, end: int) -> Consumer:
        weighted = seconds = 0.0
        for hold in holds:
            for index, minute, held in self._held_minutes(hold, start, end):
                weighted += held * self.gpu_minute(hold.node, index, minute)
                seconds += held
        return Consumer(
            workload=holds[0].workload,
            gpus_allocated=sum(len(h.gpus) for h in holds),
            active_pods=len(holds),
            utilization_ratio=weighted / seconds if seconds else None,
        )

    def utilization(
        self, workload_uid: str, start: int, end: int, *, node: str | None = None
    ) -> float | None:
        """A workload's mean utilization over [start, end) (on `node` only, if given): its
        GPU-minutes weighted by the seconds its pods held them (None: it held none)."""
        holds = [
            h
            for h in self.truth.holds
            if h.workload.uid == workload_uid and h.gpus and node in (None, h.node)
        ]
        return self._consumer(holds, start, end).utilization_ratio if holds else None

    # -- idle GPUs ------------------------------------------------------------------------

    def idle_minutes(self, *, floor: float, window_minutes: int, until: int) -> set[IdleMinute]:
        """The (GPU, pod) minutes before `until` within idle intervals: stretches of at least
        `window_minutes` consecutive minutes a pod held the GPU with its minute's utilization
        under `floor`, judged on the minutes before `until` only."""
        found: set[IdleMinute] = set()
        for hold in self.truth.holds:
            for index in hold.gpus:
                minutes = [m for i, m, _ in self._held_minutes(hold, 0, until) if i == index]
                under = [self.gpu_minute(hold.node, index, m) < floor for m in minutes]
                for first, last in _runs(under):
                    if last - first >= window_minutes:
                        found.update(
                            IdleMinute(hold.node, index, hold.pod_uid, minutes[i])
                            for i in range(first, last)
                        )
        return found


def _runs(flags: list[bool]) -> Iterator[tuple[int, int]]:
    """[first, last) of each run of True in `flags`."""
    first: int | None = None
    for position, flag in enumerate([*flags, False]):
        if flag and first is None:
            first = position
        elif not flag and first is not None:
            yield first, position
            first = None


def _minute_of(at: float) -> int:
    return math.floor(at / MINUTE) * MINUTE
