"""The leader's idle GPU job over stored minutes: an interval opens once a held GPU stayed under
the floor for the window, shows in the gauges, grows, ends; a new leader carries it on."""

from __future__ import annotations

import datetime

import peewee

from lens.roles.jobs.idling import IdleGauges, IdleGpus
from lens.runtime.clock import FakeClock
from lens.runtime.config import ClusterConfig, Config, JobsConfig
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import freshness, models
from tests.usage.conftest import CLUSTER, T0, Minutes

WINDOW = 3


def _at(minute: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(T0 + 60 * minute, datetime.UTC)


class Job:
    def __init__(self, db: peewee.Database, clock: FakeClock, *, window: int = WINDOW) -> None:
        self.metrics = SelfMetrics(process=False)
        config = Config(
            cluster=ClusterConfig(name=CLUSTER),
            jobs=JobsConfig(idle_window_minutes=window, idle_interval_seconds=60),
        )
        self.body = IdleGpus(config, db=db, clock=clock, gauges=IdleGauges(self.metrics))

    def idle(self, namespace: str = "team-a") -> float | None:
        return self.metrics.registry.get_sample_value(
            "lens_namespace_idle_gpus", {"namespace": namespace}
        )


def _rows() -> list[tuple[datetime.datetime, datetime.datetime, int, bool]]:
    table = models.GpuIdleInterval
    return [(r.started_at, r.ended_at, r.minutes, r.open) for r in table.select()]


def _run_at(job: Job, clock: FakeClock, minute: int) -> None:
    """A run when `minute` has begun: it reads the minutes up to two before."""
    clock.advance(T0 + 60 * minute + 5 - clock.time())
    job.body.run()


def test_an_interval_opens_after_the_window_grows_and_ends_when_the_gpu_works(
    db: peewee.Database, held: Minutes, usage_clock: FakeClock
) -> None:
    held.held(0, [0.01, 0.02, 0.0, 0.01, 0.6])
    held.held(0, [0.9] * 5, pod="train-1", uuid="GPU-1")  # busy all along
    job = Job(db, usage_clock)
    _run_at(job, usage_clock, 4)  # minutes 0 and 1: not yet a window
    assert _rows() == [] and job.idle() is None
    _run_at(job, usage_clock, 5)  # minute 2: three under the floor
    assert _rows() == [(_at(0), _at(3), 3, True)]
    # Idle now means: as of the end of minute 2, read two minutes later.
    idle = freshness.read(db, cluster=CLUSTER, figures=[freshness.IDLE])[freshness.IDLE]
    assert idle.as_of == _at(3) and not idle.stale(_at(5) + datetime.timedelta(seconds=5))
    assert idle.stale(_at(3) + datetime.timedelta(minutes=5, seconds=1))
    assert job.idle() == 1.0
    gpu = job.metrics.registry.get_sample_value(
        "lens_gpu_idle",
        {"node": "n1", "gpu_uuid": "GPU-0", "namespace": "team-a", "pod": "train-0"},
    )
    assert gpu == 1.0
    _run_at(job, usage_clock, 6)
    assert _rows() == [(_at(0), _at(4), 4, True)]
    _run_at(job, usage_clock, 7)  # minute 4 busy: ended
    assert _rows() == [(_at(0), _at(4), 4, False)]
    assert job.idle() is None
    (row,) = models.GpuIdleInterval.select()
    assert abs(row.utilization_mean_ratio - 0.01) < 1e-9 and row.pod_name == "train-0"


def test_a_new_leader_carries_on_an_open_interval_without_starting_another(
    db: peewee.Database, held: Minutes, usage_clock: FakeClock
) -> None:
    held.held(0, [0.0] * 8)
    first = Job(db, usage_clock)
    _run_at(first, usage_clock, 5)
    assert _rows() == [(_at(0), _at(3), 3, True)]
    successor = Job(db, usage_clock)  # another replica took over
    _run_at(successor, usage_clock, 9)
    assert _rows() == [(_at(0), _at(7), 7, True)]
    _run_at(successor, usage_clock, 11)  # minutes 7 and 8: none held since minute 8
    assert _rows() == [(_at(0), _at(8), 8, False)]


def test_a_long_look_back_is_worked_off_over_several_bounded_runs(
    db: peewee.Database, held: Minutes, usage_clock: FakeClock
) -> None:
    held.held(0, [0.0] * 16)
    job = Job(db, usage_clock, window=10)
    _run_at(job, usage_clock, 18)  # due: minutes up to 16; one window back is minute 6
    assert _rows() == []  # minutes 6-9 read: no more than CATCH_UP a run
    assert not job.body.caught_up
    job.body.run()  # minutes 10-13, at the same moment
    assert _rows() == []
    job.body.run()  # minutes 14 and 15: ten minutes under the floor
    assert _rows() == [(_at(6), _at(16), 10, True)]
    assert job.body.caught_up
    job.body.run()  # caught up: nothing more to read
    assert _rows() == [(_at(6), _at(16), 10, True)]


def test_a_new_cluster_is_read_from_its_first_held_minute_not_a_window_before(
    db: peewee.Database, held: Minutes, usage_clock: FakeClock
) -> None:
    held.held(20, [0.0] * 5)  # the cluster's first minutes, twenty minutes after T0
    job = Job(db, usage_clock, window=30)
    _run_at(job, usage_clock, 25)  # due: minutes up to 23; a window back would be minute -7
    assert job.body.caught_up  # one run, not eight of four minutes over nothing
    idle = freshness.read(db, cluster=CLUSTER, figures=[freshness.IDLE])[freshness.IDLE]
    assert idle.as_of == _at(23)
    assert _rows() == []  # three minutes under the floor are no thirty-minute window yet
