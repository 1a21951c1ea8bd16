"""The truth of a played scenario: holds as recorded, and GPU loads that follow their holders."""

from __future__ import annotations

import pytest

from lens.sim.hosts import profiles
from lens.sim.scenario.truth import DELETED, FINISHED, NODE_LOST, Truth, WorkloadRef

TRAIN = WorkloadRef(kind="PyTorchJob", name="train", namespace="ml", uid="w-train")
SERVE = WorkloadRef(kind="Deployment", name="serve", namespace="web", uid="w-serve")
T0 = 1_800_000_000  # a whole minute


def _truth() -> Truth:
    loads: dict[tuple[str, str, str], profiles.Profile] = {
        TRAIN.key: profiles.Stepped(profiles.Constant(40)),
        SERVE.key: profiles.Wave(low=10, high=90, period_seconds=50),
    }
    return Truth({"a": 2, "b": 2}, loads)


def test_a_hold_lasts_from_bind_to_its_end_and_is_recorded_once() -> None:
    truth = _truth()
    hold = truth.bind(
        pod_uid="p1",
        namespace="ml",
        pod_name="train-0",
        workload=TRAIN,
        node="a",
        gpus=(0, 1),
        at=T0 + 30,
    )
    assert truth.holder("a", 0, T0 + 29) is None and truth.holder("a", 1, T0 + 30) is hold
    truth.end("ml", "train-0", at=T0 + 150, how=FINISHED)
    truth.end("ml", "train-0", at=T0 + 999, how=DELETED)  # already ended: nothing changes
    assert (hold.until, hold.running_until, hold.ended_by) == (T0 + 150, T0 + 150, FINISHED)
    assert truth.holder("a", 0, T0 + 150) is None
    assert truth.holds == (hold,) and truth.holds_on("a", 1) == (hold,)
    assert hold.held_seconds(T0, T0 + 60) == 30 and hold.held_seconds(T0 + 60, T0 + 600) == 90


def test_a_lost_node_ends_its_holds_but_not_its_pods() -> None:
    truth = _truth()
    on_a = truth.bind(
        pod_uid="p1", namespace="ml", pod_name="t-0", workload=TRAIN, node="a", gpus=(0,), at=T0
    )
    on_b = truth.bind(
        pod_uid="p2", namespace="ml", pod_name="t-1", workload=TRAIN, node="b", gpus=(0,), at=T0
    )
    truth.lose_node("a", at=T0 + 60)
    assert (on_a.until, on_a.ended_by, on_a.running_until) == (T0 + 60, NODE_LOST, None)
    assert on_a.runs_at(T0 + 100) and not on_a.holds_at(T0 + 100)
    assert on_b.until is None and truth.lost == {"a": T0 + 60}
    truth.end("ml", "t-0", at=T0 + 360, how=DELETED)  # evicted later
    assert (on_a.until, on_a.running_until, on_a.ended_by) == (T0 + 60, T0 + 360, NODE_LOST)


def test_a_gpu_reads_its_holders_load_in_whole_percent_and_idles_between_holders() -> None:
    truth = _truth()
    truth.bind(
        pod_uid="p1", namespace="ml", pod_name="t-0", workload=TRAIN, node="a", gpus=(0,), at=T0
    )
    truth.end("ml", "t-0", at=T0 + 90, how=FINISHED)
    truth.bind(
        pod_uid="p2",
        namespace="web",
        pod_name="s-0",
        workload=SERVE,
        node="a",
        gpus=(0,),
        at=T0 + 120,
    )
    load = truth.gpu_profile("a", 0)
    assert [load.utilization(T0 + s) for s in (0, 89, 90, 119)] == [40, 40, 0, 0]
    wave = profiles.Wave(low=10, high=90, period_seconds=50)
    assert load.utilization(T0 + 131.5) == round(wave.utilization(T0 + 131.5))
    assert truth.load("b", 1, T0) == 0 and truth.load("a", 1, T0) == 0


def test_a_minute_mean_counts_each_second_with_whoever_held_the_gpu_at_its_start() -> None:
    truth = _truth()
    truth.bind(
        pod_uid="p1",
        namespace="ml",
        pod_name="t-0",
        workload=TRAIN,
        node="a",
        gpus=(0,),
        at=T0 + 15.5,  # second 15 is idle, 16 on held
    )
    truth.end("ml", "t-0", at=T0 + 60 + 45, how=FINISHED)
    truth.bind(
        pod_uid="p2",
        namespace="web",
        pod_name="s-0",
        workload=SERVE,
        node="a",
        gpus=(0,),
        at=T0 + 105,
    )
    assert truth.minute_mean("a", 0, T0) == pytest.approx(44 * 40 / 60 / 100)
    wave = profiles.Wave(low=10, high=90, period_seconds=50)
    serving = sum(round(wave.utilization(T0 + s)) for s in range(105, 120))
    assert truth.minute_mean("a", 0, T0 + 60) == pytest.approx((45 * 40 + serving) / 60 / 100)
    assert truth.minute_mean("a", 1, T0) == 0.0
