"""GPU- and port-minutes stored as reported, replaced when reported again, on every engine."""

from __future__ import annotations

import peewee
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.reports.gpuminutes import GpuMinute
from lens.reports.storing import minuterows, minutes
from lens.runtime.clock import FakeClock
from lens.store import models

from .conftest import CLUSTER, T0, at, gpu_minute, holder, port_minute, write

GIB = 2**30


def _gpu_rows() -> dict[tuple[str, str, object], dict[str, object]]:
    table = models.GpuMinuteReport
    return {(r["node_name"], r["gpu_uuid"], r["minute"]): r for r in table.select().dicts()}


def _holder_rows() -> set[tuple[object, ...]]:
    table = models.GpuMinuteHolder
    query = table.select(
        table.node_name,
        table.gpu_uuid,
        table.minute,
        table.pod_name,
        table.seconds,
        table.held_seconds,
    ).tuples()
    return set(query)


def test_a_gpu_minute_is_stored_as_reported(store: minutes.MinuteStore) -> None:
    alone, shared = holder("train-0"), holder("notebook", namespace="team-b")
    minute = gpu_minute(
        T0,
        "GPU-3",
        index=3,
        pci_bus_id="0000:9a:00.0",
        samples=58,
        utilization_mean_ratio=0.625,
        utilization_max_ratio=0.875,
        memory_activity_mean_ratio=0.25,
        vram_used_mean_bytes=40.5 * GIB,
        vram_used_max_bytes=48 * GIB,
        power_mean_watts=612.5,
        energy_joules=36_750.0,
        temperatures_max_celsius=(("edge", 45.0), ("junction", 71.5), ("memory", 80.0)),
        shares=((alone, 40.0, 50.0), (shared, 10.0, 20.0)),
    )
    assert write(store, "node-1", [minute]) == 3
    row = _gpu_rows()[("node-1", "GPU-3", at(T0))]
    assert {k: v for k, v in row.items() if k not in ("node_name", "gpu_uuid", "minute")} == {
        "cluster": CLUSTER,
        "gpu_index": 3,
        "pci_bus_id": "0000:9a:00.0",
        "samples": 58,
        "expected_samples": 60,
        "utilization_mean_ratio": 0.625,
        "utilization_max_ratio": 0.875,
        "memory_activity_mean_ratio": 0.25,
        "vram_used_mean_bytes": 40.5 * GIB,
        "vram_used_max_bytes": 48 * GIB,
        "power_mean_watts": 612.5,
        "energy_joules": 36_750.0,
        "temperature_max_celsius": 80.0,
        "temperature_edge_celsius": 45.0,
        "temperature_junction_celsius": 71.5,
        "temperature_memory_celsius": 80.0,
        "temperature_gpu_celsius": None,
        "idle_seconds": 10.0,
        "holders": 2,
    }
    assert _holder_rows() == {
        ("node-1", "GPU-3", at(T0), "train-0", 40.0, 50.0),
        ("node-1", "GPU-3", at(T0), "notebook", 10.0, 20.0),
    }
    stored = models.GpuMinuteHolder.get(models.GpuMinuteHolder.pod_name == "notebook")
    assert (stored.cluster, stored.namespace, stored.pod_uid, stored.container_id) == (
        CLUSTER,
        "team-b",
        shared.pod_uid,
        shared.container_id,
    )
    assert stored.container_name == "main"


def test_unknown_figures_stay_null_never_zero(store: minutes.MinuteStore) -> None:
    nan = float("nan")
    minute = gpu_minute(
        T0, samples=0, power_mean_watts=nan, temperatures_max_celsius=(("gpu", float("inf")),)
    )
    write(store, "node-1", [minute])
    row = _gpu_rows()[("node-1", "GPU-0", at(T0))]
    unknown = [name for name, value in row.items() if value is None]
    assert sorted(unknown) == sorted(
        [
            "utilization_mean_ratio",
            "utilization_max_ratio",
            "memory_activity_mean_ratio",
            "vram_used_mean_bytes",
            "vram_used_max_bytes",
            "power_mean_watts",
            "energy_joules",
            "temperature_max_celsius",
            *(f"temperature_{sensor}_celsius" for sensor in minuterows.SENSORS),
        ]
    )
    assert (row["samples"], row["idle_seconds"], row["holders"]) == (0, 60.0, 0)


def test_a_port_minute_keeps_its_counters_that_rose_or_are_unknown(
    store: minutes.MinuteStore,
) -> None:
    busy = port_minute(
        T0,
        "mlx5_1",
        transmit_bytes=10**12,
        receive_bytes=2 * 10**12,
        transmit_packets=10**9,
        receive_packets=None,
        counters=(("symbol_error", 3), ("port_rcv_errors", 0), ("link_downed", None)),
        hw_counters=(("out_of_buffer", 7), ("out_of_sequence", 0)),
        counter_resets=2,
    )
    quiet = port_minute(T0, "mlx5_2", counters=(("symbol_error", 0),))
    unread = port_minute(T0, "mlx5_3", samples=0)
    assert write(store, "node-1", ports=[busy, quiet, unread]) == 3
    rows = {r["device"]: r for r in models.RdmaPortMinute.select().dicts()}
    assert {k: rows["mlx5_1"][k] for k in minuterows.PORT_COLUMNS[5:]} == {
        "samples": 60,
        "expected_samples": 60,
        "transmit_bytes": 10**12,
        "receive_bytes": 2 * 10**12,
        "transmit_packets": 10**9,
        "receive_packets": None,
        "errors": 10,
        "counters": {"symbol_error": 3, "link_downed": None},
        "hw_counters": {"out_of_buffer": 7},
        "counter_resets": 2,
    }
    assert (rows["mlx5_2"]["errors"], rows["mlx5_2"]["counters"]) == (0, {})
    assert rows["mlx5_2"]["hw_counters"] is None
    assert (rows["mlx5_3"]["errors"], rows["mlx5_3"]["counters"]) == (None, None)
    assert rows["mlx5_3"]["transmit_bytes"] is None


def test_a_minute_reported_again_replaces_its_row_and_its_holders(
    store: minutes.MinuteStore,
) -> None:
    first = gpu_minute(T0, shares=((holder("a"), 60.0, 60.0),), power_mean_watts=100.0)
    write(store, "node-1", [first], [port_minute(T0, transmit_bytes=5)])
    later = gpu_minute(
        T0, shares=((holder("b"), 30.0, 30.0),), power_mean_watts=None, utilization_mean_ratio=0.5
    )
    write(store, "node-1", [later], [port_minute(T0, transmit_bytes=7)])
    (row,) = _gpu_rows().values()
    assert (row["power_mean_watts"], row["utilization_mean_ratio"]) == (None, 0.5)
    assert (row["holders"], row["idle_seconds"]) == (1, 30.0)
    assert _holder_rows() == {("node-1", "GPU-0", at(T0), "b", 30.0, 30.0)}
    assert [r.transmit_bytes for r in models.RdmaPortMinute.select()] == [7]


def test_a_resent_batch_changes_nothing(store: minutes.MinuteStore) -> None:
    batch = [
        gpu_minute(T0 + 60 * m, f"GPU-{g}", shares=((holder(f"p{g}"), 60.0, 60.0),))
        for m in range(3)
        for g in range(2)
    ]
    write(store, "node-1", batch, [port_minute(T0)])
    before = (_gpu_rows(), _holder_rows())
    write(store, "node-1", batch, [port_minute(T0)])
    assert (_gpu_rows(), _holder_rows()) == before
    assert models.GpuMinuteHolder.select().count() == 6
    assert models.RdmaPortMinute.select().count() == 1


def test_only_the_gpu_minutes_written_again_lose_their_holders(store: minutes.MinuteStore) -> None:
    old = holder("old")
    write(
        store,
        "node-1",
        [
            gpu_minute(T0 + 60 * m, g, shares=((old, 60.0, 60.0),))
            for m in (0, 1)
            for g in ("A", "B")
        ],
    )
    new = holder("new")
    again = [
        gpu_minute(T0, "A", shares=((new, 60.0, 60.0),)),
        gpu_minute(T0 + 60, "B", shares=((new, 60.0, 60.0),)),
    ]
    write(store, "node-1", again)
    assert _holder_rows() == {
        ("node-1", "A", at(T0), "new", 60.0, 60.0),
        ("node-1", "B", at(T0), "old", 60.0, 60.0),
        ("node-1", "A", at(T0 + 60), "old", 60.0, 60.0),
        ("node-1", "B", at(T0 + 60), "new", 60.0, 60.0),
    }


def test_nodes_and_clusters_do_not_collide(
    db: peewee.Database, store: minutes.MinuteStore, report_clock: FakeClock
) -> None:
    other_cluster = minutes.MinuteStore(db, cluster="c2", clock=report_clock)
    same = gpu_minute(T0, shares=((holder("a"), 60.0, 60.0),))
    write(store, "node-1", [same])
    write(store, "node-2", [same])
    write(other_cluster, "node-1", [same])
    write(store, "node-2", [gpu_minute(T0)])  # node-2 again, no holder now
    assert models.GpuMinuteReport.select().count() == 3
    holders = models.GpuMinuteHolder.select(models.GpuMinuteHolder.cluster).tuples()
    assert sorted(c for (c,) in holders) == [CLUSTER, "c2"]


def test_several_nodes_minutes_are_written_as_one(store: minutes.MinuteStore) -> None:
    first = gpu_minute(T0, shares=((holder("a"), 60.0, 60.0),))
    write(store, "node-1", [first])
    again = gpu_minute(T0, shares=((holder("b"), 60.0, 60.0),))  # node-1's minute again
    prepared = [
        store.prepare("node-1", [again], [port_minute(T0, transmit_bytes=1)]),
        store.prepare("node-2", [first, gpu_minute(T0, "GPU-1")], [port_minute(T0)]),
        store.prepare("node-3", [], [port_minute(T0 + 60)]),
    ]
    for each in prepared:
        store.before_write(each)
    assert store.write_many(prepared) == 3 + 2 + 3
    assert sorted(_gpu_rows()) == [
        ("node-1", "GPU-0", at(T0)),
        ("node-2", "GPU-0", at(T0)),
        ("node-2", "GPU-1", at(T0)),
    ]
    assert _holder_rows() == {
        ("node-1", "GPU-0", at(T0), "b", 60.0, 60.0),
        ("node-2", "GPU-0", at(T0), "a", 60.0, 60.0),
    }
    assert models.RdmaPortMinute.select().count() == 3


def test_minutes_outside_the_window_are_dropped_and_counted(store: minutes.MinuteStore) -> None:
    day = 86_400
    now = T0 + 120
    prepared = store.prepare(
        "node-1",
        [gpu_minute(now - 8 * day - 60), gpu_minute(now - 8 * day + 60, "GPU-1")],
        [port_minute(now + day + 60), port_minute(now + day - 60)],
    )
    assert prepared.dropped == minutes.Dropped(too_old=1, too_new=1)
    assert prepared.rows == 2
    store.before_write(prepared)
    assert store.write_prepared(prepared) == 2
    assert models.GpuMinuteReport.select().count() == 1
    assert models.RdmaPortMinute.select().count() == 1


def test_the_write_is_part_of_the_callers_transaction(
    db: peewee.Database, store: minutes.MinuteStore
) -> None:
    prepared = store.prepare("node-1", [gpu_minute(T0, shares=((holder("a"), 9.0, 9.0),))], [])
    store.before_write(prepared)
    with db.atomic() as transaction:
        assert store.write_prepared(prepared) == 2
        assert models.GpuMinuteReport.select().count() == 1
        transaction.rollback()
    assert models.GpuMinuteReport.select().count() == 0
    assert models.GpuMinuteHolder.select().count() == 0
    assert models.GpuHourPending.select().count() == 0


def test_prepare_does_not_touch_the_database(
    db: peewee.Database, store: minutes.MinuteStore
) -> None:
    db.close()
    store.prepare("node-1", [gpu_minute(T0)], [port_minute(T0)])
    assert db.is_closed()


def test_each_hour_written_is_marked_for_the_rollup(store: minutes.MinuteStore) -> None:
    write(store, "node-1", [gpu_minute(T0 - 60), gpu_minute(T0), gpu_minute(T0 + 60)])
    write(store, "node-2", ports=[port_minute(T0)])  # ports have no rollup
    table = models.GpuHourPending
    marks = table.select(table.cluster, table.node_name, table.hour).tuples()
    assert sorted(marks) == [(CLUSTER, "node-1", at(T0 - 3600)), (CLUSTER, "node-1", at(T0))]
    tokens = {m.hour: m.token for m in table.select()}
    write(store, "node-1", [gpu_minute(T0 + 120)])
    again = {m.hour: m.token for m in table.select()}
    assert again[at(T0)] != tokens[at(T0)], "a new write marks the hour afresh"
    assert again[at(T0 - 3600)] == tokens[at(T0 - 3600)]


def test_a_node_backlog_of_many_minutes_is_written_in_batches(store: minutes.MinuteStore) -> None:
    backlog = [
        gpu_minute(T0 - 60 * m, f"GPU-{g}", shares=((holder(f"p{g}"), 60.0, 60.0),))
        for m in range(90)
        for g in range(8)
    ]
    assert write(store, "node-1", backlog) == 2 * 720
    assert write(store, "node-1", backlog) == 2 * 720
    assert models.GpuMinuteHolder.select().count() == 720


@pytest.mark.parametrize(
    ("replaced", "expected"),
    [
        (
            [(at(T0), ("A", "B"))],
            ' AND "minute" IN (?) AND "gpu_uuid" IN (?, ?)',
        ),
        (
            [(at(T0), ("A",)), (at(T0 + 60), ("B",))],
            ' AND "minute" IN (?, ?) AND "gpu_uuid" IN (?, ?)'
            ' AND (("minute" = ? AND "gpu_uuid" IN (?)) OR ("minute" = ? AND "gpu_uuid" IN (?)))',
        ),
    ],
)
def test_the_holders_delete_names_exactly_the_gpu_minutes_written(
    replaced: list[tuple[object, tuple[str, ...]]], expected: str
) -> None:
    sql, values = minutes.holders_delete("sqlite", replaced)  # type: ignore[arg-type]
    assert sql.endswith(expected)
    assert sql.startswith(
        'DELETE FROM "gpu_minute_holders" WHERE "cluster" = ? AND "node_name" = ?'
    )
    assert len(values) == sql.count("?") - 2


_MINUTE = st.builds(
    lambda m, g, pods, power: gpu_minute(
        T0 + 60 * m,
        f"GPU-{g}",
        power_mean_watts=power,
        shares=tuple((holder(p), 60.0 / len(pods), 60.0) for p in sorted(pods)),
    ),
    st.integers(0, 3),
    st.integers(0, 2),
    st.sets(st.sampled_from("abc"), max_size=3),
    st.one_of(st.none(), st.floats(0, 1000)),
)


@given(batches=st.lists(st.lists(_MINUTE, max_size=6), min_size=1, max_size=4))
def test_the_store_holds_the_last_report_of_every_minute(
    store: minutes.MinuteStore, batches: list[list[GpuMinute]]
) -> None:
    for table in (models.GpuMinuteReport, models.GpuMinuteHolder):
        table.delete().execute()
    last: dict[tuple[str, int], GpuMinute] = {}
    for batch in batches:
        unique = {(m.uuid, m.start): m for m in batch}  # a batch holds a minute once
        write(store, "node-1", list(unique.values()))
        last.update(unique)
    stored = _gpu_rows()
    assert {(u, m) for _, u, m in stored} == {(u, at(s)) for u, s in last}
    for (uuid, start), minute in last.items():
        assert stored[("node-1", uuid, at(start))]["power_mean_watts"] == minute.power_mean_watts
    expected = {
        ("node-1", uuid, at(start), share.holder.pod_name, share.seconds, share.held_seconds)
        for (uuid, start), minute in last.items()
        for share in minute.held_by.shares
    }
    assert _holder_rows() == expected
