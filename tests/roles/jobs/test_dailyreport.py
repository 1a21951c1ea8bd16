"""The daily report: at the configured local time, the last UTC day that had ended, summed again
and written once as CSV; a report missed while down is written at the next run."""

from __future__ import annotations

import csv
import dataclasses
import datetime
import io
import logging
from pathlib import Path

import peewee
import pytest

from lens.roles.jobs.dailyreport import DailyReport
from lens.runtime.clock import FakeClock
from lens.runtime.config import Config, JobsConfig
from lens.store import models

PACIFIC = datetime.timezone(datetime.timedelta(hours=-8))  # a fixed zone: no DST in the test
TOKYO = datetime.timezone(datetime.timedelta(hours=9))


def _config(tmp_path: Path, at: str = "00:30") -> Config:
    config = Config(jobs=JobsConfig(daily_report_time=at))
    return dataclasses.replace(
        config, service=dataclasses.replace(config.service, data_dir=str(tmp_path))
    )


def _report(tmp_path: Path, now: datetime.datetime, zone: datetime.tzinfo) -> DailyReport:
    clock = FakeClock(start_time=now.timestamp())
    return DailyReport(_config(tmp_path), db=peewee.SqliteDatabase(None), clock=clock, zone=zone)


@pytest.mark.parametrize(
    ("local", "zone", "due"),
    [
        # 00:40 in California is 08:40 UTC: the UTC day before ended 8 hours ago
        (datetime.datetime(2026, 11, 24, 0, 40, tzinfo=PACIFIC), PACIFIC, "2026-11-23"),
        # 00:20 there: the last report time passed was yesterday's 00:30 (08:30 UTC on the 23rd)
        (datetime.datetime(2026, 11, 24, 0, 20, tzinfo=PACIFIC), PACIFIC, "2026-11-22"),
        # 00:40 in Tokyo is 15:40 UTC of the day before: the 22nd was the last ended
        (datetime.datetime(2026, 11, 24, 0, 40, tzinfo=TOKYO), TOKYO, "2026-11-22"),
    ],
)
def test_the_due_day_is_the_last_utc_day_ended_by_the_report_time(
    tmp_path: Path, local: datetime.datetime, zone: datetime.tzinfo, due: str
) -> None:
    assert _report(tmp_path, local, zone).due_day().isoformat() == due


def _held(hour: datetime.datetime, pod: str, namespace: str, seconds: float) -> None:
    models.GpuHourHolder.insert(
        cluster="default",
        node_name="n1",
        gpu_uuid="GPU-0",
        hour=hour,
        container_id=f"cid-{pod}",
        namespace=namespace,
        pod_name=pod,
        pod_uid=f"uid-{pod}",
        container_name="main",
        minutes=60,
        seconds=seconds,
        held_seconds=seconds,
        measured_seconds=seconds,
        used_seconds=seconds / 4,
    ).execute()


def test_the_report_is_written_once_with_named_workloads_and_logged(
    db: peewee.Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    day = datetime.datetime(2026, 11, 23, tzinfo=datetime.UTC)
    _held(day + datetime.timedelta(hours=3), "train-0", "ml", 3600)
    _held(day + datetime.timedelta(hours=4), "train-0", "ml", 1800)
    _held(day + datetime.timedelta(hours=30), "train-0", "ml", 3600)  # the 24th: not in it
    models.GpuPod.create(cluster="default", namespace="ml", name="train-0", uid="uid-train-0")
    now = datetime.datetime(2026, 11, 24, 0, 45, tzinfo=datetime.UTC)
    body = DailyReport(
        _config(tmp_path), db=db, clock=FakeClock(start_time=now.timestamp()), zone=datetime.UTC
    )
    with caplog.at_level(logging.INFO):
        path = body.write_due()
    assert path == tmp_path / "reports" / "gpu-hours-default-2026-11-23.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    by_kind = {r["group_kind"]: r for r in rows}
    assert float(by_kind["namespace"]["held_gpu_hours"]) == 1.5
    assert float(by_kind["namespace"]["used_gpu_hours"]) == 0.375
    workload = by_kind["workload"]
    assert (workload["workload_kind"], workload["workload_name"]) == ("Pod", "train-0")
    (line,) = [r for r in caplog.records if r.getMessage() == "daily GPU-hours report written"]
    assert line.__dict__["held_gpu_hours"] == 1.5 and line.__dict__["day"] == "2026-11-23"
    assert body.write_due() is None  # there already


def test_the_scheduler_fires_at_the_configured_time_through_the_loop(
    db: peewee.Database, tmp_path: Path
) -> None:
    now = datetime.datetime(2026, 11, 24, 0, 45, tzinfo=datetime.UTC)
    body = DailyReport(
        _config(tmp_path), db=db, clock=FakeClock(start_time=now.timestamp()), zone=datetime.UTC
    )
    (job,) = body.scheduler.jobs
    assert job.at_time == datetime.time(0, 30)
    body.run()  # the first run writes the report missed while down
    written = tmp_path / "reports" / "gpu-hours-default-2026-11-23.csv"
    assert written.exists()
    written.unlink()
    body.run()  # not yet time: the schedule has nothing pending
    assert not written.exists()
    job.next_run = datetime.datetime.now() - datetime.timedelta(seconds=1)  # the time came
    body.run()
    assert written.exists()
