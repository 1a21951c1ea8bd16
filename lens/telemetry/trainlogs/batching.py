"""One batch of log records into what the store writes: each line that is an iteration
(parsing.py) or a start-of-training banner (banners.py) becomes a Candidate; once its pod's
workloads are known (waiting.py) it is given a run in each of them (runs.py), in log-time order,
and the figures of one (workload, run, iteration) are merged into one row — DeepSpeed prints a
step's figures in two lines. intake.py drives it on its writer thread."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence

from lens.telemetry.trainlogs import banners, parsing
from lens.telemetry.trainlogs.figures import IterationFigures
from lens.telemetry.trainlogs.records import LogRecord
from lens.telemetry.trainlogs.runs import RunTracker, Sighting
from lens.telemetry.trainlogs.storing import IterationRow, PodChain

# A line's own time further than this from its record's is a wrong clock or zone: the record's
# time is stored instead.
MAX_LINE_CLOCK_SKEW = 86_400.0
_MAX_ITERATION = 2**63 - 1  # what training_performance.iteration holds


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """A line that is an iteration (figures) or a start-of-training banner (no figures)."""

    record: LogRecord
    figures: IterationFigures | None
    received: float  # monotonic seconds when the intake took its body
    fingerprint: int  # equal for the same line of the same pod sent again

    @property
    def pod_uid(self) -> str:
        return self.record.pod_uid

    @property
    def at(self) -> float:
        """The line's own time when it has a believable one, else its record's."""
        own = self.figures.at if self.figures is not None else None
        if own is not None and abs(own - self.record.at) <= MAX_LINE_CLOCK_SKEW:
            return own
        return self.record.at


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StoredIteration:
    """An iteration line stored, for the intake's observers (a straggler detector)."""

    workload_uid: str
    run: int
    pod_uid: str
    node: str
    rank: int | None
    at: float
    iteration: int
    figures: Mapping[str, float]
    # The pod's nearest workload (the training job itself, not a parent above it): a detector
    # following each job once takes these.
    nearest: bool = True


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Prepared:
    """A batch's rows (one per key), and per candidate line what it gave each workload."""

    rows: tuple[IterationRow, ...]
    observed: tuple[tuple[Candidate, tuple[StoredIteration, ...]], ...]


def candidates(records: Iterable[tuple[LogRecord, float]]) -> list[Candidate]:
    """The iteration and banner lines among (record, received) pairs."""
    found = []
    for record, received in records:
        figures = parsing.parse_line(record.line)
        if figures is not None:
            if figures.iteration is not None and not 0 <= figures.iteration <= _MAX_ITERATION:
                continue
        elif not banners.is_banner(record.line):
            continue
        found.append(
            Candidate(
                record=record,
                figures=figures,
                received=received,
                fingerprint=hash((record.pod_uid, record.at, record.line)),
            )
        )
    return found


def prepare(routed: Sequence[tuple[Candidate, PodChain]], tracker: RunTracker) -> Prepared:
    """The rows of `routed` candidates, runs given by `tracker` (StoreError when it cannot read
    a workload's runs; the same candidates may be prepared again)."""
    ordered = sorted(routed, key=lambda item: item[0].record.at)
    pairs = [
        (workload, _sighting(candidate, chain))
        for candidate, chain in ordered
        for workload in chain.workload_uids
    ]
    assignments = iter(tracker.assign(pairs))
    rows: dict[tuple[str, int, int], IterationRow] = {}
    observed = []
    for candidate, chain in ordered:
        seen = []
        for workload in chain.workload_uids:
            assignment = next(assignments)
            if candidate.figures is None or assignment.iteration is None:
                continue
            figures = _performance(candidate.figures, assignment.iteration)
            row = IterationRow(
                workload_uid=workload,
                serial=assignment.serial,
                iteration=assignment.iteration,
                pod_uid=candidate.pod_uid,
                at=candidate.at,
                performance=figures,
            )
            earlier = rows.get(row.key)
            if earlier is not None:
                row = dataclasses.replace(earlier, performance={**earlier.performance, **figures})
            rows[row.key] = row
            seen.append(_observation(candidate, row, figures, nearest=workload == chain.nearest))
        observed.append((candidate, tuple(seen)))
    return Prepared(rows=tuple(rows.values()), observed=tuple(observed))


def _sighting(candidate: Candidate, chain: PodChain) -> Sighting:
    figures = candidate.figures
    return Sighting(
        pod_uid=candidate.pod_uid,
        at=candidate.record.at,
        rank=figures.rank if figures is not None else None,
        iteration=figures.iteration if figures is not None else None,
        banner=figures is None,
        fingerprint=candidate.fingerprint,
        nearest_workload_uid=chain.nearest,
    )


def _performance(figures: IterationFigures, iteration: int) -> dict[str, float]:
    """The stored document: finite figures only (JSON has no infinity), and the iteration the
    run gave a line that has none (Hugging Face)."""
    document: dict[str, float] = {
        name: value for name, value in figures.performance().items() if math.isfinite(value)
    }
    document["current_iteration"] = iteration
    return document


def _observation(
    candidate: Candidate, row: IterationRow, figures: Mapping[str, float], *, nearest: bool
) -> StoredIteration:
    return StoredIteration(
        workload_uid=row.workload_uid,
        run=row.serial,
        pod_uid=candidate.pod_uid,
        node=candidate.record.node,
        rank=candidate.figures.rank if candidate.figures is not None else None,
        at=candidate.at,
        iteration=row.iteration,
        figures=figures,
        nearest=nearest,
    )
