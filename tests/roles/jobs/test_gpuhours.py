"""The leader's GPU-hours job sums today into gpu_hours_daily each run and yesterday every ten
minutes, as of the hourly rollup it read."""

from __future__ import annotations

import datetime

import peewee

from lens.roles.jobs.gpuhours import DailyGpuHours
from lens.runtime.clock import FakeClock
from lens.runtime.config import Config
from lens.store import freshness, models

NOW = datetime.datetime(2026, 11, 24, 10, 30, tzinfo=datetime.UTC)


def _held(hours_ago: int, seconds: float) -> None:
    hour = NOW.replace(minute=0) - datetime.timedelta(hours=hours_ago)
    models.GpuHourHolder.insert(
        cluster="default",
        node_name="n1",
        gpu_uuid="GPU-0",
        hour=hour,
        container_id="cid",
        namespace="ml",
        pod_name="p",
        pod_uid="uid-p",
        container_name="main",
        minutes=60,
        seconds=seconds,
        held_seconds=seconds,
        measured_seconds=seconds,
        used_seconds=seconds / 2,
    ).execute()


def _namespaces() -> dict[datetime.datetime, float]:
    table = models.GpuHoursDaily
    rows = table.select().where(table.group_kind == "namespace")
    return {r.day: r.held_gpu_hours for r in rows}


def test_today_and_yesterday_are_summed_and_summed_again(db: peewee.Database) -> None:
    _held(0, 1800)  # today 10:00
    _held(12, 3600)  # yesterday 22:00
    _held(60, 3600)  # three days ago: left as it is
    body = DailyGpuHours(Config(), db=db, clock=FakeClock(start_time=NOW.timestamp()))
    body.run()
    today = NOW.replace(hour=0, minute=0)
    yesterday = today - datetime.timedelta(days=1)
    assert _namespaces() == {today: 0.5, yesterday: 1.0}
    _held(1, 3600)  # an hour rolled up late
    body.run()
    assert _namespaces() == {today: 1.5, yesterday: 1.0}


def test_yesterday_is_summed_again_every_ten_minutes_today_every_run(
    db: peewee.Database,
) -> None:
    clock = FakeClock(start_time=NOW.timestamp())
    body = DailyGpuHours(Config(), db=db, clock=clock)
    body.run()
    today = NOW.replace(hour=0, minute=0)
    yesterday = today - datetime.timedelta(days=1)
    _held(0, 1800)
    _held(12, 3600)  # a late hour of yesterday
    clock.advance(60)
    body.run()
    assert _namespaces() == {today: 0.5}  # yesterday waits its ten minutes
    clock.advance(540)
    body.run()
    assert _namespaces() == {today: 0.5, yesterday: 1.0}


def test_the_sums_are_as_of_the_rollup_they_read(db: peewee.Database) -> None:
    clock = FakeClock(start_time=NOW.timestamp())
    body = DailyGpuHours(Config(), db=db, clock=clock)
    body.run()  # no rollup yet: nothing was stored, the sums are as of now
    known = freshness.read(db, cluster="default", figures=[freshness.GPU_HOURS])
    assert known[freshness.GPU_HOURS].as_of == NOW
    rolled = NOW - datetime.timedelta(seconds=70)
    freshness.record(
        db, cluster="default", figure=freshness.ROLLUP, as_of=rolled, interval_seconds=60
    )
    clock.advance(60)
    body.run()
    found = freshness.read(db, cluster="default", figures=[freshness.GPU_HOURS])
    summed = found[freshness.GPU_HOURS]
    assert summed.as_of == rolled
    # The rollup's interval and minute behind by design, and two runs more: then stale.
    assert not summed.stale(rolled + datetime.timedelta(seconds=(60 + 60) + 2 * 60))
    assert summed.stale(rolled + datetime.timedelta(seconds=(60 + 60) + 2 * 60 + 1))
