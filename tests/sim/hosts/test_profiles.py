from __future__ import annotations

from lens.sim.hosts import profiles


def test_profiles_stay_within_0_and_100() -> None:
    shapes: list[profiles.Profile] = [
        profiles.Idle(),
        profiles.Constant(150),
        profiles.Wave(low=10, high=90, period_seconds=20),
        profiles.Training(),
    ]
    for shape in shapes:
        for t in range(0, 200, 3):
            assert 0 <= shape.utilization(float(t)) <= 100


def test_training_dips_then_runs_busy() -> None:
    training = profiles.Training(busy=97, dip=35, step_seconds=30, dip_seconds=3)
    assert [training.utilization(t) for t in (0, 2, 3, 29, 30)] == [35, 35, 97, 97, 35]


def test_picks_are_reproducible_and_varied() -> None:
    assert profiles.pick(3, 7) == profiles.pick(3, 7)
    kinds = {type(profiles.pick(i, 1)).__name__ for i in range(40)}
    assert kinds == {"Idle", "Training", "Wave"}
