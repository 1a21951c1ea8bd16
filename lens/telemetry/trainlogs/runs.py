"""The run of its workload each training-log line belongs to (REFERENCE.md 15.1 #26): a run is
one life of a training process within a workload, numbered 1, 2, ... (its serial).

Runs are spans of log time: a run holds the lines logged from its start until the next run's
start, so that a line resent by a collector or arriving late from a slower node lands in the run
it was logged in. A new run starts at a line that shows a restart within the latest run:
- a start-of-training banner (banners.py) logged after the run's first iteration;
- an iteration lower than one the same pod and rank logged before it in the run (resumed from a
  checkpoint, or started over);
("after" and "before" by more than SLACK, a second.)
- the first line of a pod new to the run that was created after every pod logging in the run
  had ended (a restarted job's new pods; a pod joining while others run is one more node).
Many pods log one run at once (every rank of TorchTitan, the last rank of Megatron, Primus twice
per iteration), so iterations are compared per pod and rank, never across pods. The serials
survive a restart of `lens jobs`: each workload's runs are read back (`RunHistory`, storing.py)
when it is first seen. A line sent again changes nothing: it was logged at or before what it
could contradict. Hugging Face Trainer lines carry no iteration: they are numbered in order
within their run, a resent line keeping its number while remembered (`max_remembered` lines).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Sighting:
    """A line of a pod that matters to runs: a banner or an iteration."""

    pod_uid: str
    at: float  # when it was logged (Unix seconds)
    rank: int | None = None
    iteration: int | None = None  # None: a banner, or a Hugging Face line (numbered here)
    banner: bool = False
    fingerprint: int  # equal for the same line sent again
    nearest_workload_uid: str = ""  # the pod's own workload, for the StartTrain event


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RunStart:
    """A run that began: the workload_events StartTrain row to write."""

    workload_uid: str
    serial: int
    at: float
    pod_uid: str
    nearest_workload_uid: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Assignment:
    serial: int
    iteration: int | None  # None for a banner


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodMark:
    """The highest iteration a pod logged in a run, and when."""

    iteration: int
    at: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StoredRun:
    """A run as the store holds it."""

    serial: int
    start: float
    last_iteration: int | None = None
    first_iteration_at: float | None = None
    pods: Mapping[str, PodMark] = dataclasses.field(default_factory=dict)  # latest run only
    start_pod: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RunHistory:
    runs: tuple[StoredRun, ...] = ()  # by serial


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodSpan:
    """When a pod was created and ended (None: not known, or not ended)."""

    created_at: float | None
    ended_at: float | None


History = Callable[[str], RunHistory]
# Seconds by which "before" must be before: node clocks differ a little, and a stored row keeps
# its line's own time, which some frameworks print in whole seconds.
SLACK = 1.0
Spans = Callable[[Collection[str]], Mapping[str, PodSpan]]


@dataclasses.dataclass(slots=True)
class _Run:
    serial: int
    start: float
    next_number: int = 1  # of the next Hugging Face line
    first_iteration_at: float | None = None
    pods: set[str] = dataclasses.field(default_factory=set)
    marks: dict[tuple[str, int | None], PodMark] = dataclasses.field(default_factory=dict)
    restored: dict[str, PodMark] = dataclasses.field(default_factory=dict)  # per pod, any rank


class RunTracker:
    """The runs of every workload seen lately; one writer thread uses it."""

    def __init__(
        self,
        *,
        history: History,
        spans: Spans,
        max_workloads: int = 10_000,
        max_remembered: int = 100_000,
    ) -> None:
        """`history(workload uid)` reads a workload's stored runs, `spans(pod uids)` when pods
        were created and ended (both may raise StoreError; a batch that fails is assigned again,
        with the same outcome)."""
        self._history = history
        self._spans = spans
        self._max_workloads = max_workloads
        self._max_remembered = max_remembered
        self._books: dict[str, list[_Run]] = {}
        self._remembered: dict[tuple[str, int], Assignment] = {}
        self._known_spans: dict[str, PodSpan] = {}
        self._unsaved: dict[tuple[str, int], RunStart] = {}

    def assign(self, sightings: Sequence[tuple[str, Sighting]]) -> list[Assignment]:
        """The run (and number) of each (workload uid, sighting); restarts are judged in the
        order given, best the order of log time."""
        for workload in {workload for workload, _ in sightings}:
            self._book(workload)
        self._fetch_spans(sightings)
        found = [self._assign(workload, sighting) for workload, sighting in sightings]
        self._forget_old()
        return found

    def unsaved(self) -> tuple[RunStart, ...]:
        """Runs begun and not yet saved: to write with the next batch, again until saved."""
        return tuple(self._unsaved.values())

    def saved(self, starts: Collection[RunStart]) -> None:
        for start in starts:
            self._unsaved.pop((start.workload_uid, start.serial), None)

    def _book(self, workload: str) -> list[_Run]:
        book = self._books.pop(workload, None)
        if book is None:
            book = _restored(self._history(workload))
        self._books[workload] = book  # the most recently used last
        return book

    def _assign(self, workload: str, sighting: Sighting) -> Assignment:
        numbered = sighting.iteration is None and not sighting.banner  # Hugging Face
        key = (workload, sighting.fingerprint)
        if numbered and key in self._remembered:
            return self._remembered[key]
        run = self._run_of(workload, self._books[workload], sighting)
        if not numbered:
            return Assignment(serial=run.serial, iteration=sighting.iteration)
        assignment = Assignment(serial=run.serial, iteration=run.next_number)
        run.next_number += 1
        self._remembered[key] = assignment
        return assignment

    def _run_of(self, workload: str, book: list[_Run], sighting: Sighting) -> _Run:
        if not book:
            return self._begin(workload, book, sighting)
        latest = book[-1]
        if sighting.at < latest.start:  # logged before the latest run began
            return next((run for run in reversed(book) if run.start <= sighting.at), book[0])
        if self._restarted(latest, sighting):
            return self._begin(workload, book, sighting)
        _note(latest, sighting)
        return latest

    def _begin(self, workload: str, book: list[_Run], sighting: Sighting) -> _Run:
        if book:  # what judges restarts is kept for the latest run only
            book[-1].pods, book[-1].marks, book[-1].restored = set(), {}, {}
        run = _Run(serial=book[-1].serial + 1 if book else 1, start=sighting.at)
        book.append(run)
        self._unsaved[(workload, run.serial)] = RunStart(
            workload_uid=workload,
            serial=run.serial,
            at=sighting.at,
            pod_uid=sighting.pod_uid,
            nearest_workload_uid=sighting.nearest_workload_uid,
        )
        _note(run, sighting)
        return run

    def _restarted(self, run: _Run, sighting: Sighting) -> bool:
        if sighting.banner:
            first = run.first_iteration_at
            return first is not None and first < sighting.at - SLACK
        if sighting.iteration is not None:
            mark = run.marks.get((sighting.pod_uid, sighting.rank)) or run.restored.get(
                sighting.pod_uid
            )
            if (
                mark is not None
                and sighting.iteration < mark.iteration
                and sighting.at > mark.at + SLACK
            ):
                return True
        return sighting.pod_uid not in run.pods and self._replaced(run, sighting.pod_uid)

    def _replaced(self, run: _Run, pod: str) -> bool:
        """Whether `pod` was created after every pod of `run` had ended."""
        new = self._known_spans.get(pod)
        if not run.pods or new is None or new.created_at is None:
            return False
        for other in run.pods:
            span = self._known_spans.get(other)
            if span is None or span.ended_at is None or span.ended_at > new.created_at:
                return False
        return True

    def _fetch_spans(self, sightings: Sequence[tuple[str, Sighting]]) -> None:
        """Read, in one call, the spans of the pods that may need judging in this batch: every
        pod logging for a workload where some pod is new to the latest run, and that run's
        pods. An ended pod's span never changes and is kept; others are read again."""
        judged = {
            workload
            for workload, sighting in sightings
            if not self._books[workload] or sighting.pod_uid not in self._books[workload][-1].pods
        }
        if not judged:
            return
        wanted = {sighting.pod_uid for workload, sighting in sightings if workload in judged}
        for workload in judged:
            if self._books[workload]:
                wanted.update(self._books[workload][-1].pods)
        missing = {
            pod
            for pod in wanted
            if pod not in self._known_spans or self._known_spans[pod].ended_at is None
        }
        if missing:
            self._known_spans.update(self._spans(missing))

    def _forget_old(self) -> None:
        while len(self._books) > self._max_workloads:
            oldest = next(iter(self._books))
            if any(workload == oldest for workload, _ in self._unsaved):
                break  # its new run must be saved before it can be read back
            del self._books[oldest]
        while len(self._remembered) > self._max_remembered:
            del self._remembered[next(iter(self._remembered))]
        while len(self._known_spans) > self._max_remembered:
            del self._known_spans[next(iter(self._known_spans))]


def _note(run: _Run, sighting: Sighting) -> None:
    run.pods.add(sighting.pod_uid)
    if sighting.banner:
        return
    if run.first_iteration_at is None or sighting.at < run.first_iteration_at:
        run.first_iteration_at = sighting.at
    if sighting.iteration is not None:
        key = (sighting.pod_uid, sighting.rank)
        mark = run.marks.get(key)
        if mark is None or sighting.iteration > mark.iteration:
            run.marks[key] = PodMark(iteration=sighting.iteration, at=sighting.at)


def _restored(history: RunHistory) -> list[_Run]:
    stored = sorted(history.runs, key=lambda run: run.serial)
    book = [
        _Run(
            serial=run.serial,
            start=run.start,
            next_number=(run.last_iteration or 0) + 1,
            first_iteration_at=run.first_iteration_at,
        )
        for run in stored
    ]
    if book:
        latest = stored[-1]
        book[-1].restored = dict(latest.pods)
        book[-1].pods = set(latest.pods) | ({latest.start_pod} if latest.start_pod else set())
    return book
