"""What the scenario's training pods print: Megatron's banner on the first rank, an iteration
line on the last rank every ITERATION_SECONDS with figures that follow the GPUs' load, and a
pod started again resuming from the job's last checkpoint."""

from __future__ import annotations

from lens.sim.hosts import profiles
from lens.sim.scenario.trainlogs import (
    CHECKPOINT_EVERY,
    ITERATION_SECONDS,
    PEAK_TFLOPS,
    STARTUP_SECONDS,
    TrainingLogs,
)
from lens.sim.scenario.truth import FINISHED, Truth, WorkloadRef
from lens.telemetry.trainlogs.parsing import parse_line

TRAIN = WorkloadRef(kind="PyTorchJob", name="llama", namespace="ml", uid="w-llama")
SERVE = WorkloadRef(kind="Deployment", name="serve", namespace="web", uid="w-serve")
T0 = 1_800_000_000.0


def _truth() -> Truth:
    loads: dict[tuple[str, str, str], profiles.Profile] = {
        TRAIN.key: profiles.Constant(80),
        SERVE.key: profiles.Constant(30),
    }
    truth = Truth({"a": 8, "b": 8}, loads)
    for rank, node in enumerate("ab"):
        truth.bind(
            pod_uid=f"p{rank}",
            namespace="ml",
            pod_name=f"llama-worker-{rank}",
            workload=TRAIN,
            node=node,
            gpus=(0, 1, 2, 3),
            at=T0,
        )
    truth.bind(
        pod_uid="s0",
        namespace="web",
        pod_name="serve-0",
        workload=SERVE,
        node="a",
        gpus=(4,),
        at=T0,
    )
    return truth


def test_the_first_rank_announces_training_and_the_last_prints_each_iteration() -> None:
    logs = TrainingLogs(_truth())
    first_iteration = T0 + STARTUP_SECONDS + ITERATION_SECONDS
    late = logs.due(first_iteration + 2 * ITERATION_SECONDS)  # a first call looks one step back
    assert [(line.pod_name, line.at) for line in late] == [
        ("llama-worker-1", first_iteration + 2 * ITERATION_SECONDS)
    ]
    logs = TrainingLogs(_truth())
    logs.due(T0)
    lines = logs.due(first_iteration + 2 * ITERATION_SECONDS)
    assert [(line.pod_name, line.at) for line in lines] == [
        ("llama-worker-0", T0 + STARTUP_SECONDS),
        ("llama-worker-1", first_iteration),
        ("llama-worker-1", first_iteration + ITERATION_SECONDS),
        ("llama-worker-1", first_iteration + 2 * ITERATION_SECONDS),
    ]
    assert lines[0].line == "training ..."
    parsed = [parse_line(line.line) for line in lines[1:]]
    assert [p.iteration for p in parsed if p is not None] == [1, 2, 3]
    assert (lines[1].node, lines[1].namespace, lines[1].pod_uid) == ("b", "ml", "p1")


def test_the_figures_follow_the_load_and_the_loss_falls() -> None:
    logs = TrainingLogs(_truth())
    logs.due(T0)
    lines = logs.due(T0 + STARTUP_SECONDS + 300 * ITERATION_SECONDS)
    parsed = [parse_line(line.line) for line in lines if line.line != "training ..."]
    figures = [p.values for p in parsed if p is not None]
    assert len(figures) == 300
    assert all(p is not None and p.at is not None for p in parsed)
    for values in figures:
        assert abs(values["tflops"] - PEAK_TFLOPS * 0.45 * 0.8) <= PEAK_TFLOPS * 0.45 * 0.8 * 0.031
        assert abs(values["elapsed_time_per_iteration_ms"] - 1000 * ITERATION_SECONDS) <= 201
    assert figures[-1]["lm_loss"] < figures[0]["lm_loss"] - 2


def test_each_line_is_handed_once_however_the_calls_fall() -> None:
    whole = TrainingLogs(_truth())
    whole.due(T0)
    expected = whole.due(T0 + 1000)
    pieces = TrainingLogs(_truth())
    pieces.due(T0)
    found = [line for step in range(1, 101) for line in pieces.due(T0 + step * 10 - 3.5)]
    found += pieces.due(T0 + 1000)
    assert found == expected


def test_a_pod_started_again_resumes_from_the_jobs_last_checkpoint() -> None:
    truth = _truth()
    logs = TrainingLogs(truth)
    logs.due(T0)
    ended = T0 + STARTUP_SECONDS + 73 * ITERATION_SECONDS + 1
    logs.due(ended - 1)
    truth.end("ml", "llama-worker-1", at=ended, how=FINISHED)
    truth.bind(
        pod_uid="p1-again",
        namespace="ml",
        pod_name="llama-worker-1",
        workload=TRAIN,
        node="b",
        gpus=(0, 1, 2, 3),
        at=ended + 5,
    )
    lines = logs.due(ended + 5 + STARTUP_SECONDS + ITERATION_SECONDS)
    iterations = [p.iteration for line in lines if (p := parse_line(line.line)) is not None]
    assert iterations == [CHECKPOINT_EVERY + 1], "73 were done; the checkpoint was at 50"
    assert [line.pod_uid for line in lines if line.line != "training ..."] == ["p1-again"]
