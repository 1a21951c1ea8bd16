from __future__ import annotations

import pytest

from lens.sim.scenario import spec
from lens.sim.scenario.spec import Workload


def test_presets_have_the_promised_sizes() -> None:
    small, medium, large = spec.small(), spec.medium(), spec.large()
    assert (len(small.node_names), small.gpu_count) == (2, 16)
    assert {w.kind for w in small.workloads} == {
        "Deployment",
        "StatefulSet",
        "Job",
        "CronJob",
        "PyTorchJob",
        "Pod",
    }
    assert (len(medium.node_names), medium.gpu_count) == (100, 800)
    assert (len(large.node_names), large.gpu_count) == (1000, 8000)
    assert sum(w.replicas for w in large.workloads) == 5000
    assert sum(w.replicas * w.gpus_per_pod for w in large.workloads) <= 8000
    assert large == spec.large(), "presets are reproducible"


def test_unknown_presets_and_impossible_workloads_are_refused() -> None:
    with pytest.raises(ValueError, match="presets: small, medium, large"):
        spec.preset("huge")
    with pytest.raises(ValueError, match="needs a duration"):
        Workload(kind="Job", name="j")
    with pytest.raises(ValueError, match="replicas"):
        Workload(kind="Pod", name="p", replicas=0)


def test_generated_batch_jobs_come_and_go_on_the_time_grid() -> None:
    jobs = [w for w in spec.medium().workloads if w.kind == "Job"]
    assert jobs and all(w.duration is not None for w in jobs)
    for job in jobs:
        assert job.duration is not None
        assert job.start % spec.TIME_STEP_SECONDS == 0 == job.duration % spec.TIME_STEP_SECONDS
    assert len({job.start for job in jobs}) > len(jobs) // 2, "arrivals still spread out"


def test_presets_name_each_namespace_s_team() -> None:
    small, medium = spec.small(), spec.medium()
    assert small.team_of("ml") == "research" and small.team_of("serving") == "inference"
    assert small.team_of("default") == "", "a namespace not listed has no team"
    namespaces = {w.namespace for w in medium.workloads}
    assert {n for n, _ in medium.teams} == namespaces
    assert {medium.team_of(n) for n in namespaces} == set(spec.TEAMS)
    assert medium.team_of("team-7") == spec.TEAMS[7 % len(spec.TEAMS)]
