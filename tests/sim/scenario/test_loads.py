"""Workload loads: reproducible, whole percent, steady within each minute, and some long idle."""

from __future__ import annotations

from lens.sim.hosts.profiles import Profile
from lens.sim.scenario import loads, spec
from lens.sim.scenario.spec import Workload

ORIGIN = 1_800_000_000.0  # a whole minute
HOUR = range(0, 3600, 60)


def _minutes(profile: Profile) -> list[float]:
    return [profile.utilization(ORIGIN + m) for m in HOUR]


def test_every_workload_has_a_reproducible_load_steady_within_each_minute() -> None:
    medium = spec.medium()
    found = loads.workload_loads(medium, origin=ORIGIN)
    assert set(found) == {(w.namespace, w.kind, w.name) for w in medium.workloads}
    assert found == loads.workload_loads(medium, origin=ORIGIN)
    for profile in found.values():
        for minute in (ORIGIN, ORIGIN + 600, ORIGIN + 3540):
            readings = {profile.utilization(minute + s) for s in range(0, 60, 7)}
            assert len(readings) == 1 and next(iter(readings)).is_integer()
            assert 0 <= next(iter(readings)) <= 100


def test_some_workloads_sit_idle_for_more_than_half_an_hour() -> None:
    medium = spec.medium()
    found = loads.workload_loads(medium, origin=ORIGIN)

    def longest_idle(minutes: list[float]) -> int:
        longest = run = 0
        for level in minutes:
            run = run + 1 if level < 5 else 0
            longest = max(longest, run)
        return longest

    idle = [key for key, p in found.items() if longest_idle(_minutes(p)) > 30]
    busy = [key for key, p in found.items() if min(_minutes(p)) >= 5]
    assert len(idle) >= 20 and len(busy) >= len(found) // 2
    kinds = {kind for _, kind, _ in idle}
    assert {"Deployment", "StatefulSet"} <= kinds


def test_training_runs_busy_with_a_dip_minute_and_bare_pods_idle() -> None:
    training = loads.profile_for(
        Workload(kind="PyTorchJob", name="t", replicas=2), seed=1, origin=ORIGIN
    )
    minutes = _minutes(training)
    assert min(minutes) >= 30 and sum(level >= 90 for level in minutes) >= 0.8 * len(minutes)
    assert sum(level < 90 for level in minutes) >= 4, "a dip every 5 to 15 minutes"
    shell = loads.profile_for(Workload(kind="Pod", name="debug"), seed=1, origin=ORIGIN)
    assert max(_minutes(shell)) < 5
