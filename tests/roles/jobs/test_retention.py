"""The jobs' retention: each append-only table trimmed to its configured age, stale stream
positions forgotten, 0 keeping rows forever."""

from __future__ import annotations

import datetime

import peewee

from lens.roles.jobs import retention
from lens.runtime.clock import FakeClock
from lens.runtime.config import JobsConfig
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import models, upserting
from lens.store.models.tables import APPEND_ONLY_MODELS

NOW = datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC)


def _ago(days: float) -> datetime.datetime:
    return NOW - datetime.timedelta(days=days)


def _fill(ages: dict[str, float]) -> None:
    for name, days in ages.items():
        upserting.insert_new(
            models.NodeContainerEvent,
            [
                {
                    "cluster": "c1",
                    "container_id": name,
                    "event_type": "Exit",
                    "created_at": _ago(days),
                }
            ],
        )
        models.NodeDeviceChangelog.create(
            cluster="c1",
            node_name="n1",
            device_type="gpu",
            device_name="MI300X",
            device_uuid=name,
            op="CREATE",
            created_at=_ago(days),
        )
        upserting.upsert(
            models.EventStream,
            [
                {
                    "cluster": "c1",
                    "node_name": "n1",
                    "boot_id": name,
                    "committed_sequence": 1,
                    "created_at": _ago(days),
                    "updated_at": _ago(days),
                }
            ],
        )


def _body(jobs: JobsConfig, metrics: SelfMetrics) -> retention.TableRetention:
    clock = FakeClock(start_time=NOW.timestamp())
    return retention.TableRetention(retention.policies(jobs), clock=clock, metrics=metrics)


def test_each_table_keeps_its_rows_for_its_configured_days(db: peewee.Database) -> None:
    _fill({"old": 100, "month": 35, "fresh": 1})
    metrics = SelfMetrics(process=False)
    _body(JobsConfig(events_retention_days=90, changelog_retention_days=30), metrics).run()
    assert sorted(e.container_id for e in models.NodeContainerEvent.select()) == [
        "fresh",
        "month",
    ]
    assert [c.device_uuid for c in models.NodeDeviceChangelog.select()] == ["fresh"]
    assert [s.boot_id for s in models.EventStream.select()] == ["fresh"]  # 30 days untouched
    deleted = metrics.registry.get_sample_value(
        "lens_retention_deleted_rows_total", {"table": "node_device_changelog"}
    )
    assert deleted == 2


def test_zero_days_keeps_rows_forever(db: peewee.Database) -> None:
    _fill({"ancient": 10_000})
    forever = JobsConfig(
        events_retention_days=0, changelog_retention_days=0, event_streams_retention_days=0
    )
    _body(forever, SelfMetrics(process=False)).run()
    assert models.NodeContainerEvent.select().count() == 1
    assert models.NodeDeviceChangelog.select().count() == 1
    assert models.EventStream.select().count() == 1


def test_every_append_only_table_has_an_age() -> None:
    kept = {k.model for k in retention.policies(JobsConfig())}
    assert set(APPEND_ONLY_MODELS) <= kept
    assert all(k.days > 0 for k in retention.policies(JobsConfig()))
