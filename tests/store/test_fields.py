from __future__ import annotations

import datetime

import peewee
import pytest

from lens.store import models, upserting

UTC = datetime.UTC
PLUS_TWO = datetime.timezone(datetime.timedelta(hours=2))


def test_times_round_trip_as_utc_with_microseconds(db: peewee.Database) -> None:
    moment = datetime.datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=PLUS_TWO)
    upserting.upsert(
        models.GpuPod,
        [{"cluster": "c", "uid": "u1", "namespace": "n", "name": "p", "created_at": moment}],
    )
    row = models.GpuPod.get(models.GpuPod.uid == "u1")
    assert row.created_at == moment
    assert row.created_at.tzinfo == UTC
    assert row.created_at.microsecond == 123456


def test_times_compare_in_sql_as_times(db: peewee.Database) -> None:
    base = datetime.datetime(2026, 1, 1, tzinfo=UTC)
    rows = [
        {
            "cluster": "c",
            "uid": f"u{i}",
            "namespace": "n",
            "name": "p",
            "created_at": base + datetime.timedelta(microseconds=i),
        }
        for i in (0, 1, 500000)
    ]
    upserting.upsert(models.GpuPod, rows)
    newer = (
        models.GpuPod.select()
        .where(models.GpuPod.created_at > base)
        .order_by(models.GpuPod.created_at)
    )
    assert [p.uid for p in newer] == ["u1", "u500000"]


def test_naive_times_are_refused(db: peewee.Database) -> None:
    naive = datetime.datetime(2026, 1, 1)
    with pytest.raises(ValueError, match="naive datetime"):
        models.GpuPod.select().where(models.GpuPod.created_at > naive).count()


def test_json_round_trips(db: peewee.Database) -> None:
    labels = {"app": "train", "nested": {"list": [1, 2.5, None, "x"]}, "unicode": "π"}
    upserting.upsert(
        models.GpuWorkload,
        [{"cluster": "c", "uid": "w", "kind": "Job", "name": "j", "labels": labels}],
    )
    assert models.GpuWorkload.get(models.GpuWorkload.uid == "w").labels == labels
