"""The store's side of training logs: iterations into training_performance and run starts into
workload_events (StartTrain), one transaction per batch; and what the intake reads back — the
workloads a pod belongs to (workload_pod_references, every level of its owner chain, as the
original), a workload's runs after a restart (runs.RunHistory) and when pods were created and
ended (gpu_pods, pod_resources).

A row is keyed by (workload, run, iteration). Writing merges: the figures of a line join those
already stored for its key (DeepSpeed prints a step in two lines, which may come in two
batches), and a key whose figures are all stored already (a line sent again) is not written."""

from __future__ import annotations

import dataclasses
import datetime
import functools
import operator
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import peewee

from lens.runtime import errors
from lens.store import database, models, upserting
from lens.store.queries.reading import reading
from lens.telemetry.trainlogs import runs

T = TypeVar("T")
START_TRAIN = "StartTrain"
_CHUNK = 500  # values in one IN list
# A batch's rows in one INSERT, as far as the engine's parameter limit lets (upserting.py).
_ROWS_PER_STATEMENT = 10_000
_ENDED_PHASES = ("Succeeded", "Failed")
# Kept when a row is merged: the first line's pod and time.
_KEEP = ("id", "created_at", "pod_uuid")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodChain:
    """The workloads a pod belongs to (each level of its owner chain) and the nearest one."""

    workload_uids: tuple[str, ...]
    nearest: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class IterationRow:
    """One training_performance row to write: the figures of one (workload, run, iteration)."""

    workload_uid: str
    serial: int
    iteration: int
    pod_uid: str
    at: float  # created_at: the line's own time, else its record's
    performance: Mapping[str, float]

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.workload_uid, self.serial, self.iteration)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Written:
    rows: int  # training_performance rows new or given new figures
    starts: int  # StartTrain events new


class TrainingStore:
    """Reads and writes of the training-log intake for one cluster."""

    def __init__(self, db: peewee.Database, *, cluster: str) -> None:
        self._db = db
        self._cluster = cluster

    # -- reads ------------------------------------------------------------------------

    def chains(self, pod_uids: Collection[str]) -> dict[str, PodChain]:
        """The workloads of each pod that has any (pods without references are left out)."""
        refs = models.WorkloadPodReference
        found: dict[str, set[str]] = {}
        with reading(self._db):
            for chunk in _chunks(sorted(pod_uids)):
                query = refs.select(refs.pod_uid, refs.workload_uid).where(
                    (refs.cluster == self._cluster) & refs.pod_uid.in_(chunk)
                )
                for pod, workload in database.tuple_rows(query.tuples()):
                    found.setdefault(str(pod), set()).add(str(workload))
            parents = self._parents({w for ws in found.values() for w in ws})
        return {pod: _chain(workloads, parents) for pod, workloads in found.items()}

    def _parents(self, workload_uids: Collection[str]) -> dict[str, str]:
        table = models.GpuWorkload
        parents: dict[str, str] = {}
        for chunk in _chunks(sorted(workload_uids)):
            query = table.select(table.uid, table.parent_uid).where(
                (table.cluster == self._cluster) & table.uid.in_(chunk)
            )
            parents.update((str(u), str(p or "")) for u, p in database.tuple_rows(query.tuples()))
        return parents

    def history(self, workload_uid: str) -> runs.RunHistory:
        """The runs stored for a workload: StartTrain events, and runs of training rows that
        have none (written before events were, or whose event retention removed)."""
        events, perf = models.WorkloadEvent, models.TrainingPerformance
        mine = (perf.cluster == self._cluster) & (perf.workload_uid == workload_uid)
        with reading(self._db):
            started = events.select(events.run_serial, events.created_at, events.pod_uid).where(
                (events.cluster == self._cluster)
                & (events.workload_uid == workload_uid)
                & (events.type == START_TRAIN)
            )
            spans = perf.select(
                perf.serial,
                peewee.fn.MIN(perf.created_at),
                peewee.fn.MAX(perf.iteration),
            ).where(mine)
            starts = {int(s): (_seconds(at), str(p)) for s, at, p in _rows(started)}
            rows = {
                int(s): (_seconds(at), int(i)) for s, at, i in _rows(spans.group_by(perf.serial))
            }
            latest = max([*starts, *rows], default=None)
            pods = self._marks(mine & (perf.serial == latest)) if latest in rows else {}
        return runs.RunHistory(
            runs=tuple(
                _stored(serial, starts.get(serial), rows.get(serial), pods, latest)
                for serial in sorted({*starts, *rows})
            )
        )

    def _marks(self, where: peewee.ColumnBase) -> dict[str, runs.PodMark]:
        perf = models.TrainingPerformance
        query = perf.select(
            perf.pod_uuid, peewee.fn.MAX(perf.iteration), peewee.fn.MAX(perf.created_at)
        ).where(where)
        return {
            str(pod): runs.PodMark(iteration=int(iteration), at=_seconds(at))
            for pod, iteration, at in _rows(query.group_by(perf.pod_uuid))
        }

    def spans(self, pod_uids: Collection[str]) -> dict[str, runs.PodSpan]:
        """When each pod the store knows was created and ended."""
        pods, resources = models.GpuPod, models.PodResource
        created: dict[str, float] = {}
        ended: dict[str, float] = {}
        with reading(self._db):
            for chunk in _chunks(sorted(pod_uids)):
                query = pods.select(
                    pods.uid, pods.created_at, pods.updated_at, pods.deleted, pods.phase
                ).where((pods.cluster == self._cluster) & pods.uid.in_(chunk))
                for uid, at, updated, deleted, phase in _rows(query):
                    created[str(uid)] = _seconds(at)
                    if deleted or phase in _ENDED_PHASES:
                        ended[str(uid)] = _seconds(updated)
                finished = resources.select(resources.uid, resources.end_at).where(
                    (resources.cluster == self._cluster)
                    & resources.uid.in_(chunk)
                    & resources.end_at.is_null(False)
                )
                ended.update((str(uid), _seconds(at)) for uid, at in _rows(finished))
        return {
            uid: runs.PodSpan(created_at=at, ended_at=ended.get(uid)) for uid, at in created.items()
        }

    # -- writes -----------------------------------------------------------------------

    def write(self, starts: Sequence[runs.RunStart], rows: Sequence[IterationRow]) -> Written:
        """Write one batch in one transaction: rows merged into those stored (keys unique in
        `rows`), StartTrain events new to the store. StoreError when the database fails."""
        try:
            return database.idempotent_transaction(
                self._db, lambda: self._write(starts, rows), lock_first=True
            )
        except database.DRIVER_ERRORS as exc:
            raise errors.StoreError(
                f"writing training performance failed: {errors.first_line(exc)}"
            ) from exc

    def _write(self, starts: Sequence[runs.RunStart], rows: Sequence[IterationRow]) -> Written:
        stored = self._stored_figures(rows)
        changed = []
        for row in rows:
            before = stored.get(row.key)
            figures = {**before, **row.performance} if before is not None else row.performance
            if before is None or figures != before:
                changed.append(dataclasses.replace(row, performance=figures))
        written = 0
        if changed:
            written = upserting.upsert(
                models.TrainingPerformance,
                [self._row(row) for row in changed],
                keep=_KEEP,
                batch_size=_ROWS_PER_STATEMENT,
            )
        events = upserting.insert_new(models.WorkloadEvent, [self._event(s) for s in starts])
        return Written(rows=written, starts=events)

    def _stored_figures(self, rows: Sequence[IterationRow]) -> dict[tuple[str, int, int], Any]:
        """The figures stored under the keys of `rows`, read by (workload, run) groups."""
        perf = models.TrainingPerformance
        groups: dict[tuple[str, int], list[int]] = {}
        for row in rows:
            groups.setdefault((row.workload_uid, row.serial), []).append(row.iteration)
        conditions = [
            (perf.workload_uid == workload) & (perf.serial == serial) & perf.iteration.in_(chunk)
            for (workload, serial), iterations in groups.items()
            for chunk in _chunks(sorted(iterations))
        ]
        found: dict[tuple[str, int, int], Any] = {}
        for part in _chunks(conditions, 20):
            query = perf.select(perf.workload_uid, perf.serial, perf.iteration, perf.performance)
            query = query.where(
                (perf.cluster == self._cluster) & functools.reduce(operator.or_, part)
            )
            for workload, serial, iteration, document in _rows(query):
                found[(str(workload), int(serial), int(iteration))] = (
                    document if isinstance(document, dict) else {}
                )
        return found

    def _row(self, row: IterationRow) -> upserting.Row:
        return {
            "cluster": self._cluster,
            "workload_uid": row.workload_uid,
            "serial": row.serial,
            "iteration": row.iteration,
            "pod_uuid": row.pod_uid,
            "performance": dict(row.performance),
            "created_at": _datetime(row.at),
        }

    def _event(self, start: runs.RunStart) -> upserting.Row:
        return {
            "cluster": self._cluster,
            "workload_uid": start.workload_uid,
            "type": START_TRAIN,
            "run_serial": start.serial,
            "pod_uid": start.pod_uid,
            "nearest_workload_uid": start.nearest_workload_uid,
            "created_at": _datetime(start.at),
        }


def _chain(workloads: set[str], parents: Mapping[str, str]) -> PodChain:
    """The nearest workload is the one no other of the pod's workloads has as its parent (the
    original's "leaf"); the first in order when the store does not say."""
    ordered = tuple(sorted(workloads))
    above = {parents.get(w, "") for w in ordered}
    leaves = [w for w in ordered if w not in above]
    return PodChain(workload_uids=ordered, nearest=(leaves or list(ordered))[0])


def _stored(
    serial: int,
    started: tuple[float, str] | None,
    rows: tuple[float, int] | None,
    pods: Mapping[str, runs.PodMark],
    latest: int | None,
) -> runs.StoredRun:
    first_at, last = rows if rows is not None else (None, None)
    start = started[0] if started is not None else first_at
    return runs.StoredRun(
        serial=serial,
        start=start if start is not None else 0.0,
        last_iteration=last,
        first_iteration_at=first_at,
        pods=pods if serial == latest else {},
        start_pod=started[1] if started is not None and serial == latest else "",
    )


def _rows(query: Any) -> Iterable[tuple[Any, ...]]:
    return database.tuple_rows(query.tuples())


def _chunks(values: Sequence[T], size: int = _CHUNK) -> Iterable[Sequence[T]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _seconds(moment: object) -> float:
    if isinstance(moment, datetime.datetime):
        return moment.timestamp()
    return 0.0


def _datetime(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)
