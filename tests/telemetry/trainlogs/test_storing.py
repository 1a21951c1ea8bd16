"""Training rows and run starts written idempotently and merged by (workload, run, iteration);
pods' workload chains, workloads' runs and pods' spans read back — on every engine."""

from __future__ import annotations

import datetime
from collections.abc import Sequence

import peewee

from lens.store import database, models, upserting
from lens.telemetry.trainlogs.runs import PodMark, PodSpan, RunStart
from lens.telemetry.trainlogs.storing import IterationRow, PodChain, TrainingStore

CLUSTER = "c1"
T0 = 1787400001.0  # 2026-08-22T12:00:01Z


def at(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def write_cluster(
    db: peewee.Database,
    *,
    workloads: Sequence[tuple[str, str]] = (),
    references: Sequence[tuple[str, str]] = (),
    pods: Sequence[tuple[str, float, float | None]] = (),
) -> None:
    """Workloads (uid, parent uid), references (workload uid, pod uid) and GPU pods (uid,
    created, ended) as the controller writes them."""
    with database.session(db):
        if workloads:
            upserting.upsert(
                models.GpuWorkload,
                [
                    {"cluster": CLUSTER, "uid": uid, "parent_uid": parent, "kind": "Job"}
                    | {"name": uid, "namespace": "ml", "status": "Running"}
                    for uid, parent in workloads
                ],
            )
        if references:
            upserting.insert_new(
                models.WorkloadPodReference,
                [{"cluster": CLUSTER, "workload_uid": w, "pod_uid": p} for w, p in references],
            )
        for uid, created, ended in pods:
            upserting.upsert(
                models.GpuPod,
                [
                    {"cluster": CLUSTER, "uid": uid, "name": uid, "namespace": "ml"}
                    | {"created_at": at(created), "running": ended is None}
                ],
            )
            upserting.upsert(
                models.PodResource,
                [
                    {"cluster": CLUSTER, "uid": uid, "created_at": at(created)}
                    | {"end_at": None if ended is None else at(ended)}
                ],
            )


def stored_rows(db: peewee.Database) -> list[tuple[str, int, int, str, object, float]]:
    table = models.TrainingPerformance
    with database.session(db):
        query = table.select(
            table.workload_uid,
            table.serial,
            table.iteration,
            table.pod_uuid,
            table.performance,
            table.created_at,
        ).order_by(table.workload_uid, table.serial, table.iteration)
        return [(w, s, i, p, doc, c.timestamp()) for w, s, i, p, doc, c in query.tuples()]


def stored_starts(db: peewee.Database) -> list[tuple[str, int, str, str, float]]:
    table = models.WorkloadEvent
    with database.session(db):
        query = table.select(
            table.workload_uid,
            table.run_serial,
            table.pod_uid,
            table.nearest_workload_uid,
            table.created_at,
        ).where(table.type == "StartTrain")
        return sorted((w, s, p, n, c.timestamp()) for w, s, p, n, c in query.tuples())


def row(iteration: int, figures: dict[str, float], **fields: object) -> IterationRow:
    values: dict[str, object] = {
        "workload_uid": "job",
        "serial": 1,
        "iteration": iteration,
        "pod_uid": "pod-a",
        "at": T0 + iteration + 0.482113,
        "performance": {"current_iteration": iteration, **figures},
    }
    values.update(fields)
    return IterationRow(**values)  # type: ignore[arg-type]


def test_chains_name_every_workload_of_a_pod_and_the_nearest(db: peewee.Database) -> None:
    write_cluster(
        db,
        workloads=[("top", ""), ("job", "top")],
        references=[("top", "pod-a"), ("job", "pod-a"), ("other", "pod-b")],
    )
    chains = TrainingStore(db, cluster=CLUSTER).chains(["pod-a", "pod-b", "pod-c"])
    assert chains == {
        "pod-a": PodChain(workload_uids=("job", "top"), nearest="job"),
        "pod-b": PodChain(workload_uids=("other",), nearest="other"),
    }
    assert TrainingStore(db, cluster="c2").chains(["pod-a"]) == {}


def test_rows_are_written_once_and_merged(db: peewee.Database) -> None:
    store = TrainingStore(db, cluster=CLUSTER)
    engine = row(100, {"learning_rate": 1.4992e-05, "skipped_iterations_number": 0.0})
    written = store.write([], [engine])
    assert (written.rows, written.starts) == (1, 0)
    assert store.write([], [engine]).rows == 0  # sent again: nothing new
    timer = row(100, {"samples_per_second": 31.5}, pod_uid="pod-b", at=T0 + 500)
    assert store.write([], [timer]).rows == 1
    assert stored_rows(db) == [
        (
            "job",
            1,
            100,
            "pod-a",  # the first line's pod and time are kept
            {
                "current_iteration": 100,
                "learning_rate": 1.4992e-05,
                "skipped_iterations_number": 0.0,
                "samples_per_second": 31.5,
            },
            T0 + 100.482113,
        )
    ]


def test_run_starts_are_written_once_per_run(db: peewee.Database) -> None:
    store = TrainingStore(db, cluster=CLUSTER)
    start = RunStart(
        workload_uid="job", serial=1, at=T0 + 0.25, pod_uid="pod-a", nearest_workload_uid="job"
    )
    assert store.write([start], [row(1, {})]).starts == 1
    assert store.write([start], []).starts == 0
    assert stored_starts(db) == [("job", 1, "pod-a", "job", T0 + 0.25)]


def test_history_gives_runs_from_events_and_rows(db: peewee.Database) -> None:
    store = TrainingStore(db, cluster=CLUSTER)
    starts = [
        RunStart(
            workload_uid="job",
            serial=s,
            at=T0 + 1000 * s,
            pod_uid="rank0",
            nearest_workload_uid="job",
        )
        for s in (1, 2)
    ]
    rows = [
        row(10, {}, serial=1, at=T0 + 1010),
        row(20, {}, serial=1, at=T0 + 1020),
        row(5, {}, serial=2, at=T0 + 2005),
        row(7, {}, serial=2, at=T0 + 2007, pod_uid="pod-b"),
        row(9, {}, serial=2, at=T0 + 2009, pod_uid="pod-b"),
        row(1, {}, serial=3, at=T0 + 3001),  # a run with rows and no event
    ]
    store.write(starts[:1], rows[:2])
    history = store.history("job")
    assert [(r.serial, r.start, r.last_iteration) for r in history.runs] == [(1, T0 + 1000, 20)]
    store.write(starts, rows)
    runs = store.history("job").runs
    assert [(r.serial, r.start, r.last_iteration, r.first_iteration_at) for r in runs] == [
        (1, T0 + 1000, 20, T0 + 1010),
        (2, T0 + 2000, 9, T0 + 2005),
        (3, T0 + 3001, 1, T0 + 3001),
    ]
    assert runs[-1].pods == {"pod-a": PodMark(iteration=1, at=T0 + 3001)}
    assert store.history("unknown").runs == ()


def test_history_of_a_run_begun_without_rows_yet(db: peewee.Database) -> None:
    store = TrainingStore(db, cluster=CLUSTER)
    start = RunStart(workload_uid="job", serial=1, at=T0, pod_uid="rank0", nearest_workload_uid="")
    store.write([start], [])
    (run,) = store.history("job").runs
    assert (run.serial, run.start, run.first_iteration_at, run.start_pod) == (1, T0, None, "rank0")


def test_spans_of_pods(db: peewee.Database) -> None:
    write_cluster(db, pods=[("old", T0, T0 + 50.5), ("new", T0 + 60, None)])
    spans = TrainingStore(db, cluster=CLUSTER).spans(["old", "new", "unknown"])
    assert spans == {
        "old": PodSpan(created_at=T0, ended_at=T0 + 50.5),
        "new": PodSpan(created_at=T0 + 60, ended_at=None),
    }
