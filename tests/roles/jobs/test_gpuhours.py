"""The leader's GPU-hours job sums today and yesterday into gpu_hours_daily, again each run."""

from __future__ import annotations

import datetime

import peewee

from lens.roles.jobs.gpuhours import DailyGpuHours
from lens.runtime.clock import FakeClock
from lens.runtime.config import Config
from lens.store import models

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
