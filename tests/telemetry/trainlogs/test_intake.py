"""fluent-bit and Vector bodies through the intake into training_performance on every engine:
runs across restarts of training and of lens jobs, resent lines, DeepSpeed's merged lines,
pods whose workloads come late, a full queue refusing, and the metrics and observers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Sequence

import peewee
import pytest

from lens.runtime.backoff import Backoff
from lens.runtime.clock import FakeClock
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import database
from lens.telemetry.trainlogs import records
from lens.telemetry.trainlogs.batching import StoredIteration
from lens.telemetry.trainlogs.intake import IntakeSettings, LogIntake
from tests.telemetry.trainlogs.test_batching import (
    DEEPSPEED_ENGINE,
    DEEPSPEED_TIMER,
    HF,
    HF_BANNER,
    MEGATRON,
)
from tests.telemetry.trainlogs.test_storing import (
    CLUSTER,
    stored_rows,
    stored_starts,
    write_cluster,
)

NOON = 1787400001.0  # 2026-08-22T12:00:01Z
Eventually = Callable[..., None]


def megatron(iteration: int, second: int) -> str:
    stamp = f"2026-08-22 12:{second // 60:02d}:{second % 60:02d}.250000"
    return MEGATRON.replace("100/", f"{iteration}/").replace("2026-08-22 12:00:01.482113", stamp)


def fluent_bit(lines: Sequence[tuple[float, str]], pod: str = "pod-a") -> bytes:
    return json.dumps(
        [
            {
                "date": at,
                "log": line,
                "kubernetes": {
                    "pod_name": pod,
                    "namespace_name": "ml",
                    "pod_id": pod,
                    "host": "gpu-node-07",
                    "container_name": "trainer",
                },
            }
            for at, line in lines
        ]
    ).encode()


def vector(lines: Sequence[tuple[str, str]], pod: str = "pod-a") -> bytes:
    events = (
        {
            "message": line,
            "timestamp": stamp,
            "kubernetes": {"pod_name": pod, "pod_namespace": "ml", "pod_uid": pod}
            | {"pod_node_name": "gpu-node-08", "container_name": "trainer"},
        }
        for stamp, line in lines
    )
    return "\n".join(json.dumps(event) for event in events).encode()


class Intake:
    """A running intake with its metrics and what its observer was told."""

    def __init__(
        self,
        db: peewee.Database,
        clock: FakeClock | None = None,
        backoff: Backoff | None = None,
        **settings: object,
    ):
        self.metrics = SelfMetrics(process=False)
        self.told: list[StoredIteration] = []
        options: dict[str, object] = {"batch_seconds": 0.02, **settings}
        self.intake = LogIntake(
            db,
            IntakeSettings(cluster=CLUSTER, **options),  # type: ignore[arg-type]
            metrics=self.metrics,
            clock=clock,
            observers=[self.told.append],
            backoff=backoff,
        )

    def post(self, body: bytes, encoding: str = "") -> bool:
        parsed = records.parse_body(body, received_at=NOON + 9999, content_encoding=encoding)
        return self.intake.offer(parsed)

    def settle(self) -> None:
        assert self.intake.wait_idle(3.0)

    def value(self, name: str, **labels: str) -> float:
        found = self.metrics.registry.get_sample_value(name, labels)
        return 0.0 if found is None else found


@pytest.fixture
def running(db: peewee.Database) -> Iterator[Callable[..., Intake]]:
    write_cluster(
        db,
        workloads=[("top", ""), ("job", "top")],
        references=[("top", "pod-a"), ("job", "pod-a"), ("job", "pod-b")],
    )
    started: list[Intake] = []

    def start(**settings: object) -> Intake:
        intake = Intake(db, **settings)
        intake.intake.start_thread()
        started.append(intake)
        return intake

    yield start
    for intake in started:
        intake.intake.stop_thread()


def test_fluent_bit_lines_become_rows_of_every_workload(
    db: peewee.Database, running: Callable[..., Intake]
) -> None:
    intake = running()
    assert intake.post(
        fluent_bit([(NOON, "training ..."), (NOON + 1.5, MEGATRON), (NOON + 2, "NCCL INFO")])
    )
    intake.settle()
    performance = {r[0]: r[4] for r in stored_rows(db)}
    assert sorted(performance) == ["job", "top"]
    assert performance["job"]["tflops"] == 487.2  # type: ignore[index]
    assert [(r[0], r[1], r[2], r[5]) for r in stored_rows(db)] == [
        ("job", 1, 100, NOON + 0.482113),
        ("top", 1, 100, NOON + 0.482113),
    ]
    assert stored_starts(db) == [
        ("job", 1, "pod-a", "job", NOON),
        ("top", 1, "pod-a", "job", NOON),
    ]
    assert [(t.workload_uid, t.run, t.iteration, t.pod_uid) for t in intake.told] == [
        ("job", 1, 100, "pod-a"),
        ("top", 1, 100, "pod-a"),
    ]
    assert intake.value("log_analysis_consume_count_total", type="StartTrain") == 1
    assert intake.value("log_analysis_consume_count_total", type="Performance") == 1
    assert intake.value("log_consume_latency_seconds_count", node="gpu-node-07") == 3
    assert intake.value("lens_trainlogs_received_records_total") == 3
    assert intake.value("lens_trainlogs_rows_written_total") == 2
    assert intake.value("lens_trainlogs_runs_started_total") == 2
    assert intake.value("lens_trainlogs_store_lag_seconds_count") == 2


def test_vector_lines_with_nanosecond_times(
    db: peewee.Database, running: Callable[..., Intake]
) -> None:
    intake = running()
    lines = [("2026-08-22T12:00:00.123456789Z", HF_BANNER), ("2026-08-22T12:00:10.5Z", HF)]
    assert intake.post(vector(lines))
    intake.settle()
    assert [(r[0], r[1], r[2], r[5]) for r in stored_rows(db) if r[0] == "job"] == [
        ("job", 1, 1, NOON + 9.5)
    ]
    assert stored_starts(db)[0][4] == pytest.approx(NOON - 0.876543211, abs=1e-6)
    assert intake.value("log_consume_latency_seconds_count", node="gpu-node-08") == 2


def test_runs_across_restarts_of_training_and_of_lens_jobs(
    db: peewee.Database, running: Callable[..., Intake]
) -> None:
    first = running()
    first.post(fluent_bit([(NOON + s, megatron(i, s)) for s, i in ((10, 10), (20, 20), (30, 30))]))
    first.settle()
    first.post(fluent_bit([(NOON + 40, megatron(20, 40))]))  # resumed from iteration 20
    first.settle()
    first.intake.stop_thread()
    second = running()  # lens jobs restarted
    second.post(fluent_bit([(NOON + 50, megatron(30, 50)), (NOON + 60, "training ...")]))
    second.post(fluent_bit([(NOON + 70, megatron(10, 70)), (NOON + 25, megatron(25, 25))]))
    second.settle()
    runs = sorted((serial, iteration) for w, serial, iteration, *_ in stored_rows(db) if w == "job")
    assert runs == [(1, 10), (1, 20), (1, 25), (1, 30), (2, 20), (2, 30), (3, 10)]
    assert [(s[1], s[4]) for s in stored_starts(db) if s[0] == "job"] == [
        (1, NOON + 10),
        (2, NOON + 40),
        (3, NOON + 60),
    ]


def test_a_resent_body_writes_and_tells_nothing_new(
    db: peewee.Database, running: Callable[..., Intake]
) -> None:
    intake = running()
    body = fluent_bit([(NOON + 1, MEGATRON), (NOON + 2, HF)], pod="pod-b")
    intake.post(body)
    intake.settle()
    before = stored_rows(db)
    intake.post(body)
    intake.settle()
    assert stored_rows(db) == before and len(before) == 2  # iteration 100, the HF line 1
    assert intake.value("lens_trainlogs_rows_written_total") == 2
    assert len(intake.told) == 2
    assert intake.value("log_analysis_consume_count_total", type="Performance") == 2


def test_deepspeeds_two_lines_merge_across_batches(
    db: peewee.Database, running: Callable[..., Intake]
) -> None:
    intake = running()
    intake.post(fluent_bit([(NOON + 1, DEEPSPEED_ENGINE)], pod="pod-b"))
    intake.settle()
    intake.post(fluent_bit([(NOON + 1.1, DEEPSPEED_TIMER)], pod="pod-b"))
    intake.settle()
    ((workload, _, iteration, _, performance, _),) = stored_rows(db)
    assert (workload, iteration) == ("job", 100)
    assert performance == {
        "current_iteration": 100,
        "skipped_iterations_number": 0.0,
        "learning_rate": 1.4992e-05,
        "samples_per_second": 31.5,
        "mem_usages": 42.13,
        "mem_max_usage": 61.02,
    }


def test_lines_of_a_pod_wait_for_its_workload(
    db: peewee.Database, running: Callable[..., Intake], eventually: Eventually
) -> None:
    intake = running(unknown_workload_retry_seconds=0.05)
    intake.post(fluent_bit([(NOON + 1, MEGATRON)], pod="pod-late"))
    eventually(lambda: intake.intake.waiting_lines == 1)
    assert stored_rows(db) == []
    write_cluster(db, references=[("job", "pod-late")])
    eventually(lambda: len(stored_rows(db)) == 1)
    assert intake.intake.waiting_lines == 0


def test_lines_of_a_pod_never_known_are_dropped_and_counted(
    sqlite_db: peewee.Database, eventually: Eventually
) -> None:
    clock = FakeClock()
    intake = Intake(sqlite_db, clock=clock, batch_records=1)
    intake.intake.start_thread()
    try:
        intake.post(fluent_bit([(NOON + 1, MEGATRON)], pod="pod-none"))
        eventually(lambda: intake.intake.waiting_lines == 1)
        clock.advance(31)
        dropped = "lens_trainlogs_dropped_lines_total"
        eventually(lambda: intake.value(dropped, reason="unknown_workload") == 1)
        assert intake.intake.waiting_lines == 0
    finally:
        intake.intake.stop_thread()


def test_a_failing_database_is_retried_until_the_rows_are_stored(
    sqlite_db: peewee.Database, eventually: Eventually
) -> None:
    write_cluster(sqlite_db, references=[("job", "pod-a")])
    intake = Intake(sqlite_db, backoff=Backoff(initial=0.01, maximum=0.05))
    with database.session(sqlite_db):
        database.execute(sqlite_db, "ALTER TABLE training_performance RENAME TO away")
    intake.intake.start_thread()
    try:
        intake.post(fluent_bit([(NOON + 1, MEGATRON)]))
        eventually(lambda: intake.value("lens_trainlogs_write_failures_total") >= 2)
        with database.session(sqlite_db):
            database.execute(sqlite_db, "ALTER TABLE away RENAME TO training_performance")
        eventually(lambda: len(stored_rows(sqlite_db)) == 1)
        intake.settle()  # the observers are told after the commit the rows show
        assert len(intake.told) == 1
    finally:
        intake.intake.stop_thread()


def test_a_full_queue_refuses_until_drained(sqlite_db: peewee.Database) -> None:
    intake = Intake(sqlite_db, queue_records=3)
    body = fluent_bit([(NOON + i, MEGATRON) for i in range(2)])
    assert intake.post(body)
    assert not intake.post(body)  # 4 > 3: the sender is answered 503 and retries
    assert intake.value("lens_trainlogs_refused_records_total") == 2
    assert intake.value("lens_trainlogs_queued_records") == 2
    intake.intake.start_thread()
    intake.settle()
    assert intake.post(body)
    assert intake.intake.stop_thread()
    assert intake.value("lens_trainlogs_queued_records") == 0
    assert not intake.post(body)  # stopped


def test_a_queue_full_of_long_lines_refuses(sqlite_db: peewee.Database) -> None:
    intake = Intake(sqlite_db, queue_characters=1000)
    long = fluent_bit([(NOON, "x" * 600)])
    assert intake.post(long)
    assert not intake.post(long)
    assert intake.value("lens_trainlogs_refused_records_total") == 1


def test_stopping_writes_what_is_queued(db: peewee.Database) -> None:
    write_cluster(db, references=[("job", "pod-a")])
    intake = Intake(db, batch_seconds=60.0)
    assert intake.intake.name == "training-logs"
    asyncio.run(intake.intake.start())  # as lens jobs starts its parts
    intake.post(fluent_bit([(NOON + 1, MEGATRON)]))
    asyncio.run(intake.intake.stop())
    assert len(stored_rows(db)) == 1


def test_skipped_records_are_counted(sqlite_db: peewee.Database) -> None:
    intake = Intake(sqlite_db)
    body = json.dumps([{"log": "no pod"}, {"log": "x", "kubernetes": {"pod_name": "p"}}])
    assert intake.post(body.encode())
    assert intake.value("lens_trainlogs_skipped_records_total", reason="no_kubernetes") == 1
    assert intake.value("lens_trainlogs_skipped_records_total", reason="no_pod_uid") == 1


def test_a_failing_observer_is_counted_and_the_others_still_told(
    sqlite_db: peewee.Database,
) -> None:
    write_cluster(sqlite_db, references=[("job", "pod-a")])
    told: list[int] = []

    def broken(iteration: StoredIteration) -> None:
        raise RuntimeError("straggler detector bug")

    metrics = SelfMetrics(process=False)
    intake = LogIntake(
        sqlite_db,
        IntakeSettings(cluster=CLUSTER, batch_seconds=0.02),
        metrics=metrics,
        observers=[broken, lambda stored: told.append(stored.iteration)],
    )
    intake.start_thread()
    try:
        parsed = records.parse_body(fluent_bit([(NOON + 1, MEGATRON)]), received_at=NOON)
        assert intake.offer(parsed) and intake.wait_idle(3.0)
        assert told == [100]
        errors = metrics.registry.get_sample_value("lens_trainlogs_observer_errors_total")
        assert errors == 1
    finally:
        intake.stop_thread()
