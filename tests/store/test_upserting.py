from __future__ import annotations

import datetime

import peewee
import pytest

from lens.runtime import errors
from lens.store import database, models, upserting

T0 = datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)
T1 = T0 + datetime.timedelta(hours=1)


def _pod(uid: str, **values: object) -> dict[str, object]:
    row: dict[str, object] = {"cluster": "c1", "uid": uid, "namespace": "ns", "name": f"pod-{uid}"}
    row.update(values)
    return row


def _pods() -> dict[str, models.GpuPod]:
    return {p.uid: p for p in models.GpuPod.select().order_by(models.GpuPod.uid)}


def test_inserts_then_updates_on_the_natural_key(db: peewee.Database) -> None:
    rows = [_pod("a", phase="Pending", created_at=T0), _pod("b", phase="", created_at=T0)]
    assert upserting.upsert(models.GpuPod, rows) == 2
    update = [_pod("a", phase="Running", created_at=T1, gpu_allocated=8)]
    assert upserting.upsert(models.GpuPod, update) == 1
    pods = _pods()
    assert set(pods) == {"a", "b"}
    assert pods["a"].phase == "Running"
    assert pods["a"].gpu_allocated == 8
    assert pods["a"].created_at == T0, "created_at is kept from the first insert"


def test_replaying_a_batch_changes_nothing(db: peewee.Database) -> None:
    batch = [_pod(str(i), phase="Running", updated_at=T1) for i in range(20)]
    upserting.upsert(models.GpuPod, batch)
    before = [(p.id, p.uid, p.phase, p.updated_at) for p in _pods().values()]
    upserting.upsert(models.GpuPod, batch)
    after = [(p.id, p.uid, p.phase, p.updated_at) for p in _pods().values()]
    assert before == after
    assert models.GpuPod.select().count() == 20


def test_the_same_key_twice_in_one_call_keeps_the_last(db: peewee.Database) -> None:
    written = upserting.upsert(
        models.GpuPod, [_pod("a", phase="Pending"), _pod("b", phase=""), _pod("a", phase="Failed")]
    )
    assert written == 2
    assert _pods()["a"].phase == "Failed"


def test_rows_are_split_into_batches_in_one_transaction(db: peewee.Database) -> None:
    rows = [_pod(f"{i:03}") for i in range(25)]
    assert upserting.upsert(models.GpuPod, rows, batch_size=4) == 25
    assert models.GpuPod.select().count() == 25


def test_a_failing_batch_rolls_back_the_whole_call(db: peewee.Database) -> None:
    rows = [_pod(f"{i:03}") for i in range(6)]
    rows[5] = _pod("005", namespace=None)  # NOT NULL violation in the second batch
    with pytest.raises(errors.StoreError, match="writing gpu_pods failed"):
        upserting.upsert(models.GpuPod, rows, batch_size=3)
    assert models.GpuPod.select().count() == 0


def test_clusters_do_not_collide(db: peewee.Database) -> None:
    upserting.upsert(models.GpuPod, [_pod("a"), {**_pod("a"), "cluster": "c2"}])
    assert models.GpuPod.select().where(models.GpuPod.uid == "a").count() == 2


def test_insert_new_keeps_stored_rows_and_counts_only_new_ones(db: peewee.Database) -> None:
    event = {"cluster": "c1", "container_id": "abc", "event_type": "start", "created_at": T0}
    assert upserting.insert_new(models.NodeContainerEvent, [event]) == 1
    again = [
        event,
        {**event, "event_type": "exit", "created_at": T1},
        {**event, "event_type": "exit", "created_at": T1},
    ]
    assert upserting.insert_new(models.NodeContainerEvent, again) == 1
    assert upserting.insert_new(models.NodeContainerEvent, again) == 0
    assert models.NodeContainerEvent.select().count() == 2


def test_insert_new_does_not_hide_other_errors(db: peewee.Database) -> None:
    with pytest.raises(errors.StoreError):
        upserting.insert_new(
            models.NodeContainerEvent,
            [{"cluster": "c1", "container_id": "x", "event_type": None, "created_at": T0}],
        )


def test_large_inserts_that_fail_name_the_table_and_store_nothing(db: peewee.Database) -> None:
    """A large insert_new is first tried as one COPY into the table; a row it cannot take
    (NOT NULL, too long) fails the call as a small one would, and leaves nothing behind."""
    event = models.NodeContainerEvent

    def rows(**odd: object) -> list[dict[str, object]]:
        made: list[dict[str, object]] = [
            {"cluster": "c1", "container_id": f"c{i}", "event_type": "Exit", "created_at": T0}
            for i in range(upserting.COPY_MIN_ROWS + 5)
        ]
        made[-1] = {**made[-1], **odd}
        return made

    odd_rows: list[dict[str, object]] = [{"event_type": None}]
    if database.engine_of(db) != "sqlite":  # SQLite does not enforce lengths
        odd_rows.append({"event_type": "x" * 300})
    for odd in odd_rows:
        with pytest.raises(errors.StoreError, match="writing node_container_events failed"):
            upserting.insert_new(event, rows(**odd))
        assert event.select().count() == 0
    assert upserting.insert_new(event, rows()[:10]) == 10
    assert upserting.insert_new(event, rows()) == upserting.COPY_MIN_ROWS + 5 - 10


def test_a_table_of_tuples_writes_what_the_same_rows_as_mappings_write(db: peewee.Database) -> None:
    columns = ("cluster", "uid", "namespace", "name", "phase", "created_at")
    for count in (3, upserting.COPY_MIN_ROWS + 3):  # VALUES, and COPY on PostgreSQL
        as_tuples = [(f"t{count}", f"{i:04}", "ns", f"p{i}", "Running", T0) for i in range(count)]
        as_tuples.append((f"t{count}", "0000", "ns", "p0", "Failed", T1))  # the last one wins
        as_mappings = [
            dict(zip(columns, (f"m{count}", *row[1:]), strict=True)) for row in as_tuples
        ]
        assert upserting.upsert(models.GpuPod, upserting.Table(columns, as_tuples)) == count
        assert upserting.upsert(models.GpuPod, as_mappings) == count

        def stored(cluster: str) -> list[tuple[object, ...]]:
            table = models.GpuPod
            query = table.select().where(table.cluster == cluster).order_by(table.uid)
            return [(p.uid, p.name, p.phase, p.created_at) for p in query]

        assert stored(f"t{count}") == stored(f"m{count}")
        assert stored(f"t{count}")[0] == ("0000", "p0", "Failed", T1)
    event = upserting.Table(("cluster", "container_id", "event_type", "created_at"), [])
    assert upserting.insert_new(models.NodeContainerEvent, event) == 0


def test_a_table_must_be_well_formed(db: peewee.Database) -> None:
    with pytest.raises(ValueError, match="one value per column"):
        upserting.upsert(models.GpuPod, upserting.Table(("cluster", "uid"), [("c1", "a", "x")]))
    with pytest.raises(ValueError, match="no column 'colour'"):
        upserting.upsert(
            models.GpuPod, upserting.Table(("cluster", "uid", "colour"), [("c", "a", "r")])
        )
    with pytest.raises(ValueError, match="lacks natural key column 'uid'"):
        upserting.insert_new(models.GpuPod, upserting.Table(("cluster", "name"), [("c1", "x")]))
    assert models.GpuPod.select().count() == 0


def test_a_plan_writes_nothing_until_written(db: peewee.Database) -> None:
    assert upserting.plan_insert_new(models.GpuPod, []) is None
    for count in (3, upserting.COPY_MIN_ROWS):  # VALUES, and COPY on PostgreSQL
        stored = models.GpuPod.select().count()
        rows = [_pod(f"{count}-{i}", phase="Running") for i in range(count)]
        inserting = upserting.plan_insert_new(models.GpuPod, rows)
        updating = upserting.plan_upsert(models.GpuPod, [{**r, "phase": "Failed"} for r in rows])
        assert inserting is not None and updating is not None
        assert models.GpuPod.select().count() == stored
        assert inserting.write() == count
        assert updating.write() == count
    assert {p.phase for p in _pods().values()} == {"Failed"}


def test_upsert_with_only_key_columns_inserts_once(db: peewee.Database) -> None:
    ref = {"cluster": "c1", "workload_uid": "w", "pod_uid": "p"}
    assert upserting.upsert(models.WorkloadPodReference, [ref, ref]) == 1
    assert upserting.upsert(models.WorkloadPodReference, [ref]) == 1
    assert models.WorkloadPodReference.select().count() == 1


def test_nothing_to_write(db: peewee.Database) -> None:
    assert upserting.upsert(models.GpuPod, []) == 0
    assert upserting.insert_new(models.GpuPod, []) == 0


def test_rows_must_be_well_formed(db: peewee.Database) -> None:
    with pytest.raises(ValueError, match="lacks natural key column 'uid'"):
        upserting.upsert(models.GpuPod, [{"cluster": "c1", "name": "x"}])
    with pytest.raises(ValueError, match="no column 'colour'"):
        upserting.upsert(models.GpuPod, [_pod("a", colour="red")])
    with pytest.raises(ValueError, match="same columns"):
        upserting.upsert(models.GpuPod, [_pod("a"), _pod("b", phase="x")])


def test_large_calls_write_the_same_rows_as_small_ones(db: peewee.Database) -> None:
    """From COPY_MIN_ROWS rows on, PostgreSQL writes through COPY: awkward text, NULLs, booleans,
    times and the conflict clauses must come out exactly as through VALUES."""
    count = upserting.COPY_MIN_ROWS + 50
    awkward = "tab\there, new\nline, back\\slash, 'quote', \"dq\", ünï"
    rows = [
        _pod(
            f"{i:04}",
            name=f"{awkward} {i}" if i % 2 else f"pod-{i}",
            running=bool(i % 3),
            gpu_allocated=i,
            created_at=T0 + datetime.timedelta(microseconds=i),
        )
        for i in range(count)
    ]
    assert upserting.upsert(models.GpuPod, rows) == count
    pods = _pods()
    assert len(pods) == count
    for i, row in enumerate(rows):
        pod = pods[f"{i:04}"]
        got = (pod.name, pod.running, pod.gpu_allocated, pod.created_at)
        assert got == (row["name"], row["running"], i, row["created_at"])
    update = [_pod(f"{i:04}", phase="Running", created_at=T1) for i in range(count)]
    assert upserting.upsert(models.GpuPod, update) == count
    pods = _pods()
    assert {p.phase for p in pods.values()} == {"Running"}
    assert pods["0001"].created_at == T0 + datetime.timedelta(microseconds=1), "kept"
    more = [_pod(f"{i:04}", phase="Gone") for i in range(count - 10, count + 240)]
    assert upserting.insert_new(models.GpuPod, more) == 240
    assert _pods()["0001"].phase == "Running"
    assert models.GpuPod.select().where(models.GpuPod.phase == "Gone").count() == 240


def test_large_calls_convert_values_as_small_ones_do(db: peewee.Database) -> None:
    """COPY text is built column by column, each distinct time converted once: times in other
    zones (the same instant twice among them), JSON documents, numbers given for text columns and
    booleans for number columns must be stored as the VALUES path stores them."""
    east = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
    same_instant = (T0.astimezone(east), T0)

    def row(cluster: str, i: int) -> dict[str, object]:
        return {
            "cluster": cluster,
            "uid": f"w{i:04}",
            "kind": "PyTorchJob",
            "namespace": "team\ta" if i % 5 == 0 else "team-a",
            "name": i,  # a number for a text column: stored as its text
            "gpu_request": bool(i % 2),  # a boolean for a number column: stored as 0 or 1
            "labels": {"app": f"tab\there {i}", "n": i} if i % 3 else None,
            "created_at": same_instant[i % 2] + datetime.timedelta(seconds=i // 7),
            "end_at": None if i % 4 else T1.astimezone(east),
        }

    count = upserting.COPY_MIN_ROWS + 10
    assert upserting.insert_new(models.GpuWorkload, [row("big", i) for i in range(count)]) == count
    for start in range(0, count, 50):
        small = [row("small", i) for i in range(start, min(count, start + 50))]
        upserting.insert_new(models.GpuWorkload, small)

    def stored(cluster: str) -> list[tuple[object, ...]]:
        table = models.GpuWorkload
        return [
            (w.uid, w.namespace, w.name, w.gpu_request, w.labels, w.created_at, w.end_at)
            for w in table.select().where(table.cluster == cluster).order_by(table.uid)
        ]

    big = stored("big")
    assert big == stored("small")
    assert big[1] == ("w0001", "team-a", "1", 1, {"app": "tab\there 1", "n": 1}, T0, None)
    assert big[0][1] == "team\ta" and big[0][4] is None and big[0][6] == T1


def test_large_calls_keep_nulls(db: peewee.Database) -> None:
    event = models.NodeContainerEvent
    rows = [
        {
            "cluster": "c1",
            "container_id": f"c{i}",
            "event_type": "Exit",
            "exit_code": None if i % 2 else i,
            "created_at": T0,
        }
        for i in range(upserting.COPY_MIN_ROWS)
    ]
    assert upserting.insert_new(event, rows) == len(rows)
    stored = {e.container_id: e.exit_code for e in event.select()}
    assert stored == {r["container_id"]: r["exit_code"] for r in rows}


def test_plans_of_one_shape_share_their_compiled_statement(db: peewee.Database) -> None:
    first = upserting.plan_upsert(models.GpuPod, [_pod("a", phase="Pending")])
    second = upserting.plan_upsert(models.GpuPod, [_pod("b", phase="Failed"), _pod("c", phase="")])
    other = upserting.plan_upsert(models.GpuPod, [_pod("a")])  # other columns
    assert first is not None and second is not None and other is not None
    assert first.statement is second.statement
    assert other.statement is not first.statement
    assert second.write() == 2
    assert {p.uid: p.phase for p in _pods().values()} == {"b": "Failed", "c": ""}


def test_plans_of_one_statement_merge_into_one_write_of_all_their_rows(
    db: peewee.Database,
) -> None:
    parts = [
        upserting.plan_upsert(models.GpuPod, [_pod(uid, phase="Running") for uid in uids])
        for uids in (["a", "b"], ["c"], [])
    ]
    assert parts[2] is None
    merged = upserting.merged(parts)
    assert merged is not None and merged.counted == 3
    assert merged.write() == 3
    assert {p.uid: p.phase for p in _pods().values()} == dict.fromkeys("abc", "Running")
    assert upserting.merged([parts[1], None]) is parts[1]
    assert upserting.merged([None]) is None
    other = upserting.plan_upsert(models.GpuPod, [_pod("d")])  # other columns
    with pytest.raises(ValueError, match="only plans of one statement merge"):
        upserting.merged([parts[0], other])


def test_merged_plans_past_a_batch_take_several_statements(db: peewee.Database) -> None:
    parts = [upserting.plan_upsert(models.GpuPod, [_pod(str(i))], batch_size=2) for i in range(5)]
    merged = upserting.merged(parts)
    assert merged is not None and merged.inline() is None
    assert merged.write() == 5 and len(_pods()) == 5


def test_a_small_write_is_one_statement_to_send_with_others(db: peewee.Database) -> None:
    rows = [_pod("a", phase="Running"), _pod("b", phase="")]
    planned = upserting.plan_upsert(models.GpuPod, rows)
    assert planned is not None
    inline = planned.inline()
    assert inline is not None
    sql, params = inline
    database.execute(db, sql, params)
    assert {p.uid: p.phase for p in _pods().values()} == {"a": "Running", "b": ""}
    batched = upserting.plan_upsert(models.GpuPod, [_pod(str(i)) for i in range(5)], batch_size=2)
    assert batched is not None and batched.inline() is None


def test_a_failing_write_in_the_callers_transaction_is_the_callers_to_roll_back(
    db: peewee.Database,
) -> None:
    upserting.upsert(models.GpuPod, [_pod("a")])
    with pytest.raises(errors.StoreError, match="writing gpu_pods failed"), db.atomic():
        upserting.upsert(models.GpuPod, [_pod("b")])
        upserting.upsert(models.GpuPod, [_pod("c", namespace=None)])  # NOT NULL
    assert set(_pods()) == {"a"}
