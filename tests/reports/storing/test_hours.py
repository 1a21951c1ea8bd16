"""Hours rolled up from known minutes equal the figures worked out by hand; late minutes repair
them; a mark made again while the rollup ran survives it."""

from __future__ import annotations

import datetime

import peewee
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.reports.gpuminutes import GpuMinute
from lens.reports.storing import hours, minutes
from lens.store import models

from .conftest import CLUSTER, T0, at, gpu_minute, holder, write

GIB = 2**30
NOW = at(T0 + 120)
A, B = holder("a"), holder("b", namespace="team-b")


def _known_minutes() -> list[GpuMinute]:
    return [
        gpu_minute(
            T0,
            samples=60,
            utilization_mean_ratio=0.5,
            utilization_max_ratio=0.9,
            memory_activity_mean_ratio=0.2,
            vram_used_mean_bytes=10.0 * GIB,
            vram_used_max_bytes=12 * GIB,
            power_mean_watts=300.0,
            energy_joules=18_000.0,
            temperatures_max_celsius=(("edge", 40.0), ("junction", 50.0)),
            shares=((A, 60.0, 60.0),),
        ),
        gpu_minute(
            T0 + 60,
            samples=30,
            utilization_mean_ratio=0.8,
            utilization_max_ratio=1.0,
            vram_used_mean_bytes=20.0 * GIB,
            vram_used_max_bytes=24 * GIB,
            power_mean_watts=600.0,
            temperatures_max_celsius=(("edge", 45.0), ("junction", 70.0), ("memory", 75.0)),
            shares=((A, 15.0, 30.0), (B, 15.0, 30.0)),
        ),
        gpu_minute(T0 + 120, samples=0),
    ]


def _hours() -> dict[tuple[str, str, datetime.datetime], dict[str, object]]:
    table = models.GpuHour
    return {(r["node_name"], r["gpu_uuid"], r["hour"]): r for r in table.select().dicts()}


def _holder_hours() -> dict[tuple[str, str, datetime.datetime, str], dict[str, object]]:
    table = models.GpuHourHolder
    return {
        (r["node_name"], r["gpu_uuid"], r["hour"], r["pod_name"]): r for r in table.select().dicts()
    }


def _pending() -> list[tuple[str, datetime.datetime]]:
    table = models.GpuHourPending
    return sorted(table.select(table.node_name, table.hour).tuples())


def test_an_hour_equals_its_minutes_worked_out_by_hand(
    db: peewee.Database, store: minutes.MinuteStore
) -> None:
    write(store, "node-1", [*_known_minutes(), gpu_minute(T0, "GPU-1", samples=60)])
    write(store, "node-2", [gpu_minute(T0 - 60, power_mean_watts=100.0)])
    result = hours.roll_up(db, cluster=CLUSTER, now=NOW)
    assert result == hours.RollupResult(
        node_hours=2, gpu_hours=3, holder_hours=2, expired=0, complete=True
    )
    row = _hours()[("node-1", "GPU-0", at(T0))]
    assert row.pop("vram_used_mean_bytes") == pytest.approx((10 * 60 + 20 * 30) / 90 * GIB)
    assert row.pop("utilization_mean_ratio") == pytest.approx((0.5 * 60 + 0.8 * 30) / 90)
    assert row.pop("power_mean_watts") == pytest.approx((300 * 60 + 600 * 30) / 90)
    assert row == {
        "cluster": CLUSTER,
        "node_name": "node-1",
        "gpu_uuid": "GPU-0",
        "gpu_index": 0,
        "hour": at(T0),
        "minutes": 3,
        "samples": 90,
        "expected_samples": 180,
        "utilization_max_ratio": 1.0,
        "memory_activity_mean_ratio": 0.2,  # known in the first minute only
        "vram_used_max_bytes": 24 * GIB,
        "energy_joules": 18_000.0,
        "energy_minutes": 1,
        "temperature_max_celsius": 75.0,
        "temperature_edge_celsius": 45.0,
        "temperature_junction_celsius": 70.0,
        "temperature_memory_celsius": 75.0,
        "temperature_gpu_celsius": None,
        "idle_seconds": 0.0 + 30.0 + 60.0,
    }
    other = _hours()[("node-2", "GPU-0", at(T0 - 3600))]
    assert (other["minutes"], other["power_mean_watts"], other["energy_joules"]) == (1, 100.0, None)
    assert _hours()[("node-1", "GPU-1", at(T0))]["utilization_mean_ratio"] is None
    held = _holder_hours()
    a, b = held[("node-1", "GPU-0", at(T0), "a")], held[("node-1", "GPU-0", at(T0), "b")]
    assert (a["minutes"], a["seconds"], a["held_seconds"]) == (2, 75.0, 90.0)
    assert (b["minutes"], b["seconds"], b["held_seconds"]) == (1, 15.0, 30.0)
    # Used GPU-seconds: each share times its own minute's utilization (a: 60 s at 0.5 and
    # 15 s at 0.8), not the hour's mean times its seconds.
    assert (a["measured_seconds"], a["used_seconds"]) == (75.0, pytest.approx(60 * 0.5 + 15 * 0.8))
    assert (b["measured_seconds"], b["used_seconds"]) == (15.0, pytest.approx(15 * 0.8))
    assert (b["namespace"], b["pod_uid"], b["container_id"]) == (
        "team-b",
        B.pod_uid,
        B.container_id,
    )
    assert _pending() == []


def test_seconds_in_minutes_of_unknown_utilization_are_not_measured(
    db: peewee.Database, store: minutes.MinuteStore
) -> None:
    write(
        store,
        "node-1",
        [
            gpu_minute(T0, utilization_mean_ratio=0.25, shares=((A, 60.0, 60.0),)),
            gpu_minute(T0 + 60, utilization_mean_ratio=None, shares=((A, 60.0, 60.0),)),
        ],
    )
    hours.roll_up(db, cluster=CLUSTER, now=NOW)
    a = _holder_hours()[("node-1", "GPU-0", at(T0), "a")]
    assert (a["seconds"], a["measured_seconds"], a["used_seconds"]) == (120.0, 60.0, 15.0)


def test_a_late_minute_repairs_its_hour(db: peewee.Database, store: minutes.MinuteStore) -> None:
    write(store, "node-1", _known_minutes())
    hours.roll_up(db, cluster=CLUSTER, now=NOW)
    late = gpu_minute(T0 + 1800, samples=60, energy_joules=2_000.0, shares=((B, 60.0, 60.0),))
    write(store, "node-1", [late])
    assert _pending() == [("node-1", at(T0))]
    assert hours.roll_up(db, cluster=CLUSTER, now=NOW).gpu_hours == 1
    row = _hours()[("node-1", "GPU-0", at(T0))]
    assert (row["minutes"], row["samples"], row["energy_joules"], row["energy_minutes"]) == (
        4,
        150,
        20_000.0,
        2,
    )
    b = _holder_hours()[("node-1", "GPU-0", at(T0), "b")]
    assert (b["minutes"], b["seconds"]) == (2, 75.0)


def test_a_minute_reported_again_rolls_up_with_its_new_holders(
    db: peewee.Database, store: minutes.MinuteStore
) -> None:
    write(store, "node-1", [gpu_minute(T0, shares=((A, 60.0, 60.0),))])
    hours.roll_up(db, cluster=CLUSTER, now=NOW)
    write(store, "node-1", [gpu_minute(T0, shares=((B, 20.0, 20.0),))])
    hours.roll_up(db, cluster=CLUSTER, now=NOW)
    assert list(_holder_hours()) == [("node-1", "GPU-0", at(T0), "b")]
    assert _hours()[("node-1", "GPU-0", at(T0))]["idle_seconds"] == 40.0


def test_min_age_and_max_hours_bound_a_run(db: peewee.Database, store: minutes.MinuteStore) -> None:
    for node in ("node-1", "node-2", "node-3"):
        write(store, node, [gpu_minute(T0 - 3600), gpu_minute(T0)])
    later, settled = at(T0 + 300), datetime.timedelta(minutes=65)  # the last hour's end + 5 min
    waiting = hours.roll_up(db, cluster=CLUSTER, now=later, min_age=settled, max_hours=2)
    assert (waiting.node_hours, waiting.complete) == (2, False)
    rest = hours.roll_up(db, cluster=CLUSTER, now=later, min_age=settled)
    assert (rest.node_hours, rest.complete) == (1, True)
    assert {hour for _, hour in _pending()} == {at(T0)}, "the current hour waits"
    current = hours.roll_up(db, cluster=CLUSTER, now=NOW, nodes_per_query=2)
    assert (current.node_hours, current.gpu_hours) == (3, 3)
    assert len(_hours()) == 6


def test_marks_of_hours_older_than_the_minutes_kept_are_only_cleared(
    db: peewee.Database, store: minutes.MinuteStore
) -> None:
    write(store, "node-1", [gpu_minute(T0)])
    later = NOW + datetime.timedelta(days=9)
    result = hours.roll_up(db, cluster=CLUSTER, now=later)
    assert (result.expired, result.node_hours, result.gpu_hours) == (1, 0, 0)
    assert _pending() == []
    assert _hours() == {}


def test_a_mark_made_again_while_the_rollup_worked_is_kept(
    db: peewee.Database, store: minutes.MinuteStore
) -> None:
    write(store, "node-1", [gpu_minute(T0)])
    # The rollup reads the marks, then a minute of the same hour commits before it clears them.
    read = hours._read_marks(db, CLUSTER, until=NOW, limit=10)
    write(store, "node-1", [gpu_minute(T0 + 60)])
    hours._clear(CLUSTER, read)
    assert _pending() == [("node-1", at(T0))]
    hours.roll_up(db, cluster=CLUSTER, now=NOW)
    assert _pending() == []
    assert _hours()[("node-1", "GPU-0", at(T0))]["minutes"] == 2


def test_clusters_roll_up_apart(db: peewee.Database, store: minutes.MinuteStore) -> None:
    write(store, "node-1", [gpu_minute(T0)])
    assert hours.roll_up(db, cluster="c2", now=NOW).node_hours == 0
    assert _pending() == [("node-1", at(T0))]


_FIGURE = st.one_of(st.none(), st.floats(0, 1, allow_subnormal=False))


@given(
    figures=st.lists(
        st.tuples(st.integers(0, 59), st.integers(0, 60), _FIGURE, _FIGURE),
        min_size=1,
        max_size=12,
        unique_by=lambda f: f[0],
    )
)
def test_a_rolled_hour_is_the_sample_weighted_mean_of_its_minutes(
    db: peewee.Database,
    store: minutes.MinuteStore,
    figures: list[tuple[int, int, float | None, float | None]],
) -> None:
    for table in (models.GpuMinuteReport, models.GpuHour, models.GpuHourPending):
        table.delete().execute()
    reported = [
        gpu_minute(
            T0 + 60 * m,
            samples=samples,
            utilization_mean_ratio=None if samples == 0 else utilization,
            energy_joules=energy,
        )
        for m, samples, utilization, energy in figures
    ]
    write(store, "node-1", reported)
    hours.roll_up(db, cluster=CLUSTER, now=NOW)
    row = _hours()[("node-1", "GPU-0", at(T0))]
    known = [(m.samples, m.utilization_mean_ratio) for m in reported]
    weight = sum(s for s, u in known if u is not None)
    if weight:
        expected = sum(s * u for s, u in known if u is not None) / weight
        assert row["utilization_mean_ratio"] == pytest.approx(expected)
    else:
        assert row["utilization_mean_ratio"] is None
    energies = [m.energy_joules for m in reported if m.energy_joules is not None]
    assert row["energy_minutes"] == len(energies)
    assert row["energy_joules"] == (pytest.approx(sum(energies)) if energies else None)
    assert (row["minutes"], row["samples"]) == (len(reported), sum(m.samples for m in reported))
