from __future__ import annotations

import pytest

from lens.sim.hosts import profiles


def test_profiles_stay_within_0_and_100() -> None:
    shapes: list[profiles.Profile] = [
        profiles.Idle(),
        profiles.Constant(150),
        profiles.Wave(low=10, high=90, period_seconds=20),
        profiles.Training(),
        profiles.Stepped(profiles.Wave(low=0, high=100, period_seconds=7)),
        profiles.Phases(((150, 60), (-5, 30))),
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


def test_stepped_holds_its_value_through_each_step_in_whole_percent() -> None:
    stepped = profiles.Stepped(profiles.Wave(low=10, high=90, period_seconds=600), step_seconds=60)
    wave = profiles.Wave(low=10, high=90, period_seconds=600)
    assert {stepped.utilization(t) for t in range(0, 60, 5)} == {50.0}
    assert stepped.utilization(60.5) == round(wave.utilization(60)) == 74


def test_phases_take_turns_from_their_origin() -> None:
    phases = profiles.Phases(((80, 600), (2, 1800)), origin=1000)
    assert [phases.utilization(t) for t in (0, 1000, 1599, 1600, 3399, 3400)] == [
        80,
        80,
        80,
        2,
        2,
        80,
    ]
    with pytest.raises(ValueError, match="phases"):
        profiles.Phases(())
