from __future__ import annotations

import datetime

import peewee
import pytest

from lens.store import models, retention, upserting

NOW = datetime.datetime(2026, 6, 1, tzinfo=datetime.UTC)


def _events(count: int, *, age_days: float) -> list[dict[str, object]]:
    moment = NOW - datetime.timedelta(days=age_days)
    return [
        {
            "cluster": "c1",
            "container_id": f"ctr-{age_days}-{i}",
            "event_type": "start",
            "created_at": moment + datetime.timedelta(seconds=i),
        }
        for i in range(count)
    ]


def test_deletes_only_expired_rows_in_bounded_batches(db: peewee.Database) -> None:
    upserting.insert_new(
        models.NodeContainerEvent, _events(23, age_days=40) + _events(5, age_days=1)
    )
    result = retention.delete_expired(
        models.NodeContainerEvent, before=NOW - datetime.timedelta(days=30), batch_size=10
    )
    assert result == retention.RetentionResult(
        table="node_container_events", deleted=23, batches=3, complete=True
    )
    assert models.NodeContainerEvent.select().count() == 5


def test_max_batches_leaves_the_rest_for_the_next_run(db: peewee.Database) -> None:
    upserting.insert_new(models.NodeContainerEvent, _events(25, age_days=40))
    cutoff = NOW - datetime.timedelta(days=30)
    first = retention.delete_expired(
        models.NodeContainerEvent, before=cutoff, batch_size=10, max_batches=2
    )
    assert (first.deleted, first.complete) == (20, False)
    second = retention.delete_expired(
        models.NodeContainerEvent, before=cutoff, batch_size=10, max_batches=2
    )
    assert (second.deleted, second.complete) == (5, True)
    assert models.NodeContainerEvent.select().count() == 0


def test_nothing_expired(db: peewee.Database) -> None:
    result = retention.delete_expired(models.WorkloadEvent, before=NOW)
    assert (result.deleted, result.batches, result.complete) == (0, 0, True)


def test_live_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="not append-only"):
        retention.delete_expired(models.GpuPod, before=NOW)
    with pytest.raises(ValueError, match="batch_size"):
        retention.delete_expired(models.WorkloadEvent, before=NOW, batch_size=0)


def test_rows_untouched_since_the_cutoff_are_deleted_and_fresh_ones_kept(
    db: peewee.Database,
) -> None:
    def stream(boot: str, age_days: float) -> dict[str, object]:
        moment = NOW - datetime.timedelta(days=age_days)
        return {
            "cluster": "c1",
            "node_name": "n1",
            "boot_id": boot,
            "committed_sequence": 7,
            "created_at": NOW - datetime.timedelta(days=90),
            "updated_at": moment,
        }

    upserting.upsert(models.EventStream, [stream("gone", 40), stream("live", 0.01)])
    result = retention.delete_untouched(
        models.EventStream, before=NOW - datetime.timedelta(days=30)
    )
    assert (result.table, result.deleted, result.complete) == ("event_streams", 1, True)
    assert [s.boot_id for s in models.EventStream.select()] == ["live"]
    with pytest.raises(ValueError, match="no updated_at"):
        retention.delete_untouched(models.NodeContainerEvent, before=NOW)
