"""Which workloads a pod's lines go to, cached from the store (storing.TrainingStore.chains).

The controller writes a pod's workload_pod_references a moment after the pod starts, and the
pod's first lines may arrive first: the lines of a pod the store has no workload for yet wait,
are looked up again every `retry_seconds`, and are dropped (counted by reason) once they waited
`wait_seconds`, or at once when `max_waiting` lines already wait. A pod's workloads are read
again after `refresh_seconds`, so that a parent found later joins its chain. The intake
(intake.py) routes each batch through `PodWorkloads.route`."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Generic, Protocol, TypeVar

from lens.telemetry.trainlogs.storing import PodChain

Chains = Callable[[Collection[str]], Mapping[str, PodChain]]


class PodLine(Protocol):
    @property
    def pod_uid(self) -> str: ...


L = TypeVar("L", bound=PodLine)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Routed(Generic[L]):
    """The lines whose pods' workloads are known, each with them; those dropped, by reason."""

    ready: list[tuple[L, PodChain]]
    dropped: Mapping[str, int]


@dataclasses.dataclass(frozen=True, slots=True)
class _Known:
    chain: PodChain
    until: float  # read again after this (monotonic)


class PodWorkloads(Generic[L]):
    """The pod → workloads cache and the lines waiting for theirs; used by one thread."""

    def __init__(
        self,
        chains: Chains,
        *,
        wait_seconds: float,
        retry_seconds: float,
        max_waiting: int,
        refresh_seconds: float = 300.0,
        max_pods: int = 100_000,
    ) -> None:
        self._chains = chains
        self._wait = wait_seconds
        self._retry = retry_seconds
        self._max_waiting = max_waiting
        self._refresh = refresh_seconds
        self._max_pods = max_pods
        self._known: dict[str, _Known] = {}
        self._waiting: dict[str, list[tuple[float, L]]] = {}  # pod -> (deadline, line)
        self._count = 0
        self._next_retry = 0.0

    @property
    def waiting(self) -> int:
        """Lines waiting for their pod's workloads."""
        return self._count

    def route(self, lines: Sequence[L], now: float) -> Routed[L]:
        """`lines` and the waiting lines whose pods' workloads are known now (StoreError when
        the store cannot say: nothing changed then, route the same lines again)."""
        self._look_up({line.pod_uid for line in lines}, now)
        dropped: Counter[str] = Counter()
        ready: list[tuple[L, PodChain]] = []
        for pod in [pod for pod in self._waiting if pod in self._known]:
            chain = self._known[pod].chain
            waited = self._waiting.pop(pod)
            self._count -= len(waited)
            ready.extend((line, chain) for _, line in waited)
        dropped["unknown_workload"] += self._expire(now)
        for line in lines:
            known = self._known.get(line.pod_uid)
            if known is not None:
                ready.append((line, known.chain))
            elif self._count >= self._max_waiting:
                dropped["waiting_full"] += 1
            else:
                if not self._count:  # just read: the first retry is one interval away
                    self._next_retry = now + self._retry
                self._waiting.setdefault(line.pod_uid, []).append((now + self._wait, line))
                self._count += 1
        return Routed(ready=ready, dropped={k: v for k, v in dropped.items() if v})

    def drop_waiting(self) -> int:
        """Give up every waiting line (the intake stops); how many there were."""
        count = self._count
        self._waiting.clear()
        self._count = 0
        return count

    def _look_up(self, pods: set[str], now: float) -> None:
        """Read the workloads of pods not known (or known too long), and of waiting pods once
        their retry is due; pods already waiting are not read again before then."""
        wanted = {
            pod
            for pod in pods
            if pod not in self._waiting
            and (pod not in self._known or self._known[pod].until <= now)
        }
        retrying = now >= self._next_retry and bool(self._waiting)
        if retrying:
            wanted.update(self._waiting)
        if not wanted:
            return
        found = self._chains(wanted)
        if retrying:
            self._next_retry = now + self._retry
        for pod in wanted:
            chain = found.get(pod)
            if chain is None and pod in self._known:
                chain = self._known[pod].chain  # references are never taken back
            if chain is not None:
                self._known.pop(pod, None)
                self._known[pod] = _Known(chain=chain, until=now + self._refresh)
        while len(self._known) > self._max_pods:
            del self._known[next(iter(self._known))]

    def _expire(self, now: float) -> int:
        expired = 0
        for pod in list(self._waiting):
            lines = self._waiting[pod]
            kept = [(deadline, line) for deadline, line in lines if deadline > now]
            expired += len(lines) - len(kept)
            if kept:
                self._waiting[pod] = kept
            else:
                del self._waiting[pod]
        self._count -= expired
        return expired
