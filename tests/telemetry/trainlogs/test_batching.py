"""A batch of records into rows: iteration and banner lines found, runs given per workload of
the pod's chain, DeepSpeed's two lines of a step merged, Hugging Face lines numbered, each row
stamped with its line's own time."""

from __future__ import annotations

from lens.telemetry.trainlogs import batching
from lens.telemetry.trainlogs.records import LogRecord
from lens.telemetry.trainlogs.runs import RunHistory, RunTracker
from lens.telemetry.trainlogs.storing import PodChain

NOON = 1787400001.0  # 2026-08-22T12:00:01Z
# ../shared/formats/training-logs.md sections 1, 3, 4, 5 (the record a second after the line).
MEGATRON = (
    " [2026-08-22 12:00:01.482113] iteration      100/   10000 | consumed samples:         6400 |"
    " elapsed time per iteration (ms): 5123.4 | throughput per GPU (TFLOP/s/GPU): 487.2 |"
    " learning rate: 1.499250E-05 | global batch size:    64 | lm loss: 7.214836E+00 |"
    " loss scale: 1.0 | grad norm: 2.143 | number of skipped iterations:   0 |"
    " number of nan iterations:   0 |"
)
TORCHTITAN = (
    "[titan] 2026-08-22 12:00:01,482 - root - INFO - step: 50  loss:  3.41250  grad_norm:  0.8731"
    "  memory: 61.22GiB(32.01%)  tps: 7,842  tflops: 451.37  mfu: 34.72%"
)
DEEPSPEED_ENGINE = (
    "[2026-08-22 12:00:01,482] [INFO] [logging.py:128:log_dist] [Rank 0] step=100, skipped=0,"
    " lr=[1.4992e-05], mom=[(0.9, 0.95)]"
)
DEEPSPEED_TIMER = (
    "epoch=0/micro_step=400/global_step=100, RunningAvgSamplesPerSec=31.27,"
    " CurrSamplesPerSec=31.5, MemAllocated=42.13GB, MaxMemAllocated=61.02GB"
)
HF = "{'loss': 2.1234, 'grad_norm': 1.0873012542724609, 'learning_rate': 4.9e-05, 'epoch': 0.05}"
HF_BANNER = "[INFO|trainer.py:2134] 2026-08-22 11:58:40,011 >> ***** Running training *****"
CHAIN = PodChain(workload_uids=("job", "top"), nearest="job")


def record(line: str, at: float = NOON + 1, pod: str = "pod-a") -> LogRecord:
    return LogRecord(
        line=line,
        at=at,
        pod_uid=pod,
        pod_name=pod,
        namespace="ml",
        node="gpu-node-07",
        container="trainer",
    )


def tracker() -> RunTracker:
    return RunTracker(history=lambda workload: RunHistory(), spans=lambda pods: {})


def prepared(*records: LogRecord, chain: PodChain = CHAIN) -> batching.Prepared:
    found = batching.candidates((r, 0.0) for r in records)
    return batching.prepare([(c, chain) for c in found], tracker())


def test_iteration_and_banner_lines_are_found_and_the_rest_left() -> None:
    lines = [MEGATRON, "NCCL INFO Channel 00/32", HF_BANNER, TORCHTITAN, "", DEEPSPEED_TIMER]
    found = batching.candidates((record(line), 5.0) for line in lines)
    assert [c.record.line for c in found] == [MEGATRON, HF_BANNER, TORCHTITAN, DEEPSPEED_TIMER]
    assert [c.figures is None for c in found] == [False, True, False, False]
    again = batching.candidates([(record(MEGATRON), 9.0), (record(MEGATRON, at=NOON + 2), 9.0)])
    assert again[0].fingerprint == found[0].fingerprint != again[1].fingerprint


def test_a_megatron_line_gives_one_row_per_workload_of_the_pod() -> None:
    batch = prepared(record(MEGATRON))
    assert [(r.workload_uid, r.serial, r.iteration, r.pod_uid) for r in batch.rows] == [
        ("job", 1, 100, "pod-a"),
        ("top", 1, 100, "pod-a"),
    ]
    (first, _) = batch.rows
    assert first.at == NOON + 0.482113  # the line's own time, not the record's
    assert first.performance["current_iteration"] == 100
    assert first.performance["tflops"] == 487.2
    assert first.performance["lm_loss"] == 7.214836
    (_, stored) = batch.observed[0]
    assert [(s.workload_uid, s.run, s.iteration, s.node, s.at) for s in stored] == [
        ("job", 1, 100, "gpu-node-07", NOON + 0.482113),
        ("top", 1, 100, "gpu-node-07", NOON + 0.482113),
    ]
    assert [s.nearest for s in stored] == [True, False], "the job itself, then its parent"


def test_deepspeeds_two_lines_of_a_step_are_one_row() -> None:
    batch = prepared(
        record(DEEPSPEED_ENGINE, at=NOON + 0.5),
        record(DEEPSPEED_TIMER, at=NOON + 0.6),
        chain=PodChain(workload_uids=("job",), nearest="job"),
    )
    (row,) = batch.rows
    assert row.iteration == 100 and row.at == NOON + 0.482
    assert row.performance == {
        "current_iteration": 100,
        "skipped_iterations_number": 0.0,
        "learning_rate": 1.4992e-05,
        "samples_per_second": 31.5,
        "mem_usages": 42.13,
        "mem_max_usage": 61.02,
    }


def test_hugging_face_lines_are_numbered_in_their_run() -> None:
    batch = prepared(
        record(HF_BANNER, at=NOON),
        record(HF, at=NOON + 10),
        record(HF.replace("2.1234", "2.0001"), at=NOON + 20),
        chain=PodChain(workload_uids=("job",), nearest="job"),
    )
    assert [(r.iteration, r.performance["lm_loss"], r.at) for r in batch.rows] == [
        (1, 2.1234, NOON + 10),  # no time of its own: the record's
        (2, 2.0001, NOON + 20),
    ]
    assert batch.rows[0].performance["current_iteration"] == 1


def test_a_line_whose_own_clock_is_far_off_gets_its_records_time() -> None:
    (row, _) = prepared(record(TORCHTITAN, at=NOON + 3 * 86_400)).rows
    assert row.at == NOON + 3 * 86_400


def test_lines_are_taken_in_log_time_order() -> None:
    """A restart's banner arrives after the new run's first line in the batch's order."""
    chain = PodChain(workload_uids=("job",), nearest="job")
    batch = prepared(
        record(MEGATRON, at=NOON + 1),
        record(MEGATRON.replace("100/", "10/"), at=NOON + 600),  # resumed
        record("training ...", at=NOON + 500),
        chain=chain,
    )
    assert [(r.serial, r.iteration) for r in batch.rows] == [(1, 100), (2, 10)]
