from __future__ import annotations

import datetime

import peewee

from lens.store import history, models

NOW = datetime.datetime(2026, 11, 21, tzinfo=datetime.UTC)


def _snapshot(uid: str, version: int, cluster: str = "c1") -> dict[str, object]:
    return {
        "cluster": cluster,
        "pod_uid": uid,
        "pod_name": uid,
        "namespace": "ml",
        "resource_version": version,
        "created_at": NOW,
    }


def test_the_newest_versions_are_kept_for_one_object_only(db: peewee.Database) -> None:
    table = models.PodSnapshot
    rows = [_snapshot("a", v) for v in range(1, 7)] + [_snapshot("b", v) for v in (1, 2)]
    table.insert_many(rows).execute()
    mine = (table.cluster == "c1") & (table.pod_uid == "a")
    history.keep_newest(table, table.resource_version, mine, 3)
    kept = sorted((r.pod_uid, r.resource_version) for r in table.select())
    assert kept == [("a", 4), ("a", 5), ("a", 6), ("b", 1), ("b", 2)]
    history.keep_newest(table, table.resource_version, mine, 5)  # fewer than the bound: kept
    assert table.select().where(mine).count() == 3


def test_which_objects_have_history(db: peewee.Database) -> None:
    table = models.PodSnapshot
    table.insert_many([_snapshot("a", 1), _snapshot("a", 2), _snapshot("c", 1, "c2")]).execute()
    uids = ["a", "b", "c"] + [f"x{i}" for i in range(600)]  # more than one chunk
    assert history.with_history(table, table.pod_uid, "c1", uids) == {"a"}
    assert history.with_history(table, table.pod_uid, "c2", uids) == {"c"}
