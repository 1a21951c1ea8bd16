"""Rows made from minutes: one value per column, in order, and nothing a column cannot hold."""

from __future__ import annotations

import math

from lens.reports.storing import minuterows

from .conftest import T0, at, gpu_minute, holder, port_minute


def _named(columns: tuple[str, ...], row: tuple[object, ...]) -> dict[str, object]:
    return dict(zip(columns, row, strict=True))


def test_a_gpu_row_has_a_value_per_column_and_drops_what_is_not_a_number() -> None:
    minute = gpu_minute(
        T0,
        samples=2**40,
        power_mean_watts=math.nan,
        energy_joules=math.inf,
        temperatures_max_celsius=(("junction", 70.0), ("hbm", 81.0), ("edge", math.nan)),
        shares=((holder("a"), 30.0, 30.0),),
    )
    row = _named(
        minuterows.GPU_COLUMNS, minuterows.gpu_row(minute, cluster="c", node="n", start=at(T0))
    )
    assert (row["samples"], row["power_mean_watts"], row["energy_joules"]) == (
        minuterows.MAX_INT,
        None,
        None,
    )
    # A sensor without a column still counts towards the maximum.
    assert (row["temperature_max_celsius"], row["temperature_junction_celsius"]) == (81.0, 70.0)
    assert row["temperature_edge_celsius"] is None and row["holders"] == 1


def test_holder_rows_are_one_per_share() -> None:
    minute = gpu_minute(T0, shares=((holder("a"), 20.0, 40.0), (holder("b"), 20.0, 40.0)))
    rows = minuterows.holder_rows(minute, cluster="c", node="n", start=at(T0))
    named = [_named(minuterows.HOLDER_COLUMNS, row) for row in rows]
    assert [(r["pod_name"], r["seconds"], r["held_seconds"]) for r in named] == [
        ("a", 20.0, 40.0),
        ("b", 20.0, 40.0),
    ]


def test_a_port_row_sums_the_known_error_increases_and_keeps_only_those_not_zero() -> None:
    minute = port_minute(
        T0,
        counters=(("symbol_error", 3), ("link_downed", 0)),
        hw_counters=(("out_of_buffer", None), ("packet_seq_err", 2)),
    )
    row = _named(
        minuterows.PORT_COLUMNS, minuterows.port_row(minute, cluster="c", node="n", start=at(T0))
    )
    assert row["errors"] == 5
    assert row["counters"] == {"symbol_error": 3}
    assert row["hw_counters"] == {"out_of_buffer": None, "packet_seq_err": 2}
    none_read = _named(
        minuterows.PORT_COLUMNS,
        minuterows.port_row(port_minute(T0), cluster="c", node="n", start=at(T0)),
    )
    assert (none_read["errors"], none_read["counters"], none_read["hw_counters"]) == (
        None,
        None,
        None,
    )
