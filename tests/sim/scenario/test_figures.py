"""The figures Lens should report, worked out by hand from a small truth."""

from __future__ import annotations

import pytest

from lens.sim.hosts import profiles
from lens.sim.scenario.figures import NAMESPACE, TEAM, WORKLOAD, Figures, IdleMinute
from lens.sim.scenario.truth import FINISHED, Truth, WorkloadRef

STUCK = WorkloadRef(kind="Job", name="stuck", namespace="ml", uid="w-stuck", team="research")
BUSY = WorkloadRef(kind="Deployment", name="busy", namespace="web", uid="w-busy")
T0 = 1_800_000_000  # a whole minute
MINUTE = 60


@pytest.fixture
def figures() -> Figures:
    """stuck holds a/0 at 2 % for 40 minutes; busy holds a/1-2 at 80 % from half a minute in,
    and held b/0 for a minute and a half."""
    loads: dict[tuple[str, str, str], profiles.Profile] = {
        STUCK.key: profiles.Stepped(profiles.Constant(2)),
        BUSY.key: profiles.Stepped(profiles.Constant(80)),
    }
    truth = Truth({"a": 4, "b": 4}, loads)
    truth.bind(
        pod_uid="p-stuck",
        namespace="ml",
        pod_name="stuck-x",
        workload=STUCK,
        node="a",
        gpus=(0,),
        at=T0,
    )
    truth.end("ml", "stuck-x", at=T0 + 40 * MINUTE, how=FINISHED)
    truth.bind(
        pod_uid="p-busy",
        namespace="web",
        pod_name="busy-x",
        workload=BUSY,
        node="a",
        gpus=(1, 2),
        at=T0 + 30,
    )
    truth.bind(
        pod_uid="p-was",
        namespace="web",
        pod_name="busy-y",
        workload=BUSY,
        node="b",
        gpus=(0,),
        at=T0,
    )
    truth.end("web", "busy-y", at=T0 + 90, how=FINISHED)
    return Figures(truth)


def test_allocation_counts_the_gpus_held_at_the_moment(figures: Figures) -> None:
    assert figures.node_allocation(T0 + 60) == {"a": 3, "b": 1}
    assert figures.node_allocation(T0 + 90) == {"a": 3, "b": 0}
    assert figures.allocation_rate(T0 + 10) == 100 * 2 / 8
    figures.truth.lose_node("a", at=T0 + 100)  # busy-x's GPUs go with it; stuck-x ends later
    assert figures.node_allocation(T0 + 100) == {"a": 1, "b": 0}
    assert figures.allocation_rate(T0 + 41 * MINUTE) == 0.0, "a lost node keeps its capacity"


def test_gpu_seconds_weigh_each_held_second_by_its_gpu_minute(figures: Figures) -> None:
    by_workload = figures.gpu_seconds(T0, T0 + 2 * MINUTE, by=WORKLOAD)
    assert by_workload["w-stuck"].held == 120 and by_workload["w-stuck"].used == pytest.approx(2.4)
    # a/1-2: 30 s of a minute whose mean is 40 %, then a whole minute at 80 %, each GPU;
    # b/0: a whole minute at 80 %, then 30 s of a minute whose mean is 40 %.
    assert by_workload["w-busy"].held == 2 * 90 + 90
    assert by_workload["w-busy"].used == pytest.approx(
        2 * (30 * 0.4 + 60 * 0.8) + 60 * 0.8 + 30 * 0.4
    )
    by_namespace = figures.gpu_seconds(T0 + MINUTE, T0 + 2 * MINUTE, by=NAMESPACE)
    assert by_namespace["ml"].held == 60 and by_namespace["web"].held == 2 * 60 + 30
    # Teams: stuck's workload is the research team's; busy's has no team label ('').
    by_team = figures.gpu_seconds(T0 + MINUTE, T0 + 2 * MINUTE, by=TEAM)
    assert by_team["research"].held == 60 and by_team[""].held == 2 * 60 + 30
    with pytest.raises(ValueError, match="group by"):
        figures.gpu_seconds(T0, T0 + MINUTE, by="label")


def test_consumers_are_the_running_pods_workloads_and_their_recent_gpu_minutes(
    figures: Figures,
) -> None:
    found = figures.consumers(T0 + 2 * MINUTE, window_minutes=5)
    assert set(found) == {"w-stuck", "w-busy"}
    busy = found["w-busy"]
    assert (busy.workload, busy.gpus_allocated, busy.active_pods) == (BUSY, 2, 1)
    assert busy.utilization_ratio == pytest.approx((30 * 0.4 + 60 * 0.8) / 90)
    assert found["w-stuck"].utilization_ratio == pytest.approx(0.02)
    late = figures.consumers(T0 + 60 * MINUTE, window_minutes=5)
    assert set(late) == {"w-busy"}, "a finished pod is nobody's consumer"
    assert figures.utilization("w-busy", T0, T0 + 2 * MINUTE) == pytest.approx(
        (2 * (30 * 0.4 + 60 * 0.8) + 60 * 0.8 + 30 * 0.4) / 270
    )
    assert figures.utilization("w-none", T0, T0 + MINUTE) is None
    # w-busy's pods: a/1-2 (30 s at 40 %, then 80 %) and b/0 (80 %, then 30 s at 40 %).
    assert figures.utilization("w-busy", T0, T0 + 2 * MINUTE, node="b") == pytest.approx(
        (60 * 0.8 + 30 * 0.4) / 90
    )
    assert figures.utilization("w-busy", T0, T0 + 2 * MINUTE, node="c") is None


def test_idle_minutes_are_those_of_stretches_under_the_floor_as_long_as_the_window(
    figures: Figures,
) -> None:
    def idle(until_minutes: int) -> set[IdleMinute]:
        return figures.idle_minutes(
            floor=0.05, window_minutes=30, until=T0 + until_minutes * MINUTE
        )

    assert idle(29) == set(), "a stretch judged on 29 minutes is not idle yet"
    assert idle(30) == {IdleMinute("a", 0, "p-stuck", T0 + m * MINUTE) for m in range(30)}
    assert idle(90) == {IdleMinute("a", 0, "p-stuck", T0 + m * MINUTE) for m in range(40)}
