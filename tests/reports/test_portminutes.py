"""RDMA port minutes against known traffic, through wraps, resets and glitches."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from lens.reports.portminutes import PortMinute, PortMinuteSummariser
from lens.reports.samples import PortSample

T0 = 1_800_000_000
RATE = 400e9 / 8  # a 400 Gb/s NDR port, in bytes per second
TX_PER_SECOND, RX_PER_SECOND = 1_000_000_000, 2_000_000_000  # bytes
TX_PACKETS_PER_SECOND, RX_PACKETS_PER_SECOND = 100_000, 200_000
OUT_OF_BUFFER_PER_SECOND = 3
# The counters' values at T0: far into their range, as on a port up for months.
START_BYTES, START_PACKETS = 4 * 2**50, 2**40
START_OUT_OF_BUFFER = 2**32 - 100  # wraps 33.3 s after T0


def reading(t: float, **overrides: Any) -> PortSample:
    """The port at `t` under steady traffic, a symbol error every 10 s (at 3.5 s past each tenth
    second, away from minute boundaries), and `overrides` in place of some counters."""
    seconds = t - T0
    port = PortSample(
        device="mlx5_0",
        port=1,
        time=t,
        rate_bytes_per_second=RATE,
        transmit_bytes=int(START_BYTES + TX_PER_SECOND * seconds),
        receive_bytes=int(START_BYTES + RX_PER_SECOND * seconds),
        transmit_packets=int(START_PACKETS + TX_PACKETS_PER_SECOND * seconds),
        receive_packets=int(START_PACKETS + RX_PACKETS_PER_SECOND * seconds),
        counters=(("port_xmit_discards", 0), ("symbol_error", 20 + int((seconds + 16.5) // 10))),
        # mlx5's 32-bit queue counter: it wraps at 2^32 in the minute from T0.
        hw_counters=(
            (
                "out_of_buffer",
                int(START_OUT_OF_BUFFER + OUT_OF_BUFFER_PER_SECOND * seconds) % 2**32,
            ),
        ),
    )
    return dataclasses.replace(port, **overrides)


TIMES = [T0 - 5.5 + k for k in range(250)]  # every second, half a second off the boundaries


def summarise(readings: Iterable[PortSample], **kwargs: Any) -> dict[int, PortMinute]:
    summariser = PortMinuteSummariser(interval_seconds=1.0, **kwargs)
    return {m.start: m for r in readings for m in summariser.add(r)}


def test_each_minute_has_the_traffic_the_port_carried() -> None:
    minutes = summarise(reading(t) for t in TIMES)
    assert sorted(minutes) == [T0 - 60, T0, T0 + 60, T0 + 120, T0 + 180]
    for start in (T0, T0 + 60, T0 + 120, T0 + 180):
        minute = minutes[start]
        assert (minute.device, minute.port) == ("mlx5_0", 1)
        assert (minute.samples, minute.missing_samples) == (60, 0)
        assert minute.transmit_bytes == 60 * TX_PER_SECOND
        assert minute.receive_bytes == 60 * RX_PER_SECOND
        assert minute.transmit_packets == 60 * TX_PACKETS_PER_SECOND
        assert minute.receive_packets == 60 * RX_PACKETS_PER_SECOND
        assert minute.counters == (("port_xmit_discards", 0), ("symbol_error", 6))
        assert minute.hw_counters == (("out_of_buffer", 60 * OUT_OF_BUFFER_PER_SECOND),)
        assert minute.counter_resets == 0


def test_the_first_minute_without_a_reading_before_it_is_unknown() -> None:
    first = summarise(reading(t) for t in TIMES)[T0 - 60]
    assert (first.samples, first.expected_samples) == (6, 60)
    assert first.transmit_bytes is None
    assert first.counters == (("port_xmit_discards", None), ("symbol_error", None))


def test_a_32_bit_hardware_counter_wrapping_is_counted_through() -> None:
    wraps = [t for t in TIMES if reading(t).hw_counters[0][1] < reading(t - 1).hw_counters[0][1]]
    assert T0 < wraps[0] < T0 + 60  # the profile does wrap inside a minute
    assert summarise(reading(t) for t in TIMES)[T0].hw_counters == (("out_of_buffer", 180),)


def test_a_64_bit_data_counter_wrapping_is_counted_through() -> None:
    modulus = 4 * 2**64  # 64-bit counter of 4-byte words

    def wrapping(t: float) -> PortSample:
        start = modulus - 90 * TX_PER_SECOND  # wraps 90 s after T0
        return reading(t, transmit_bytes=(start + int(TX_PER_SECOND * (t - T0))) % modulus)

    minutes = summarise(wrapping(t) for t in TIMES)
    assert [minutes[s].transmit_bytes for s in (T0, T0 + 60, T0 + 120)] == [60 * TX_PER_SECOND] * 3
    assert minutes[T0 + 60].counter_resets == 0


def test_a_counter_reset_counts_from_the_reset_and_says_so() -> None:
    reset_after = T0 + 80.5  # the port is reset just after this reading

    def resetting(t: float) -> PortSample:
        if t <= reset_after:
            return reading(t)
        since = t - reset_after
        return reading(
            t,
            receive_bytes=int(RX_PER_SECOND * since),
            receive_packets=int(RX_PACKETS_PER_SECOND * since),
        )

    minutes = summarise(resetting(t) for t in TIMES)
    assert minutes[T0 + 60].receive_bytes == 60 * RX_PER_SECOND
    assert minutes[T0 + 60].receive_packets == 60 * RX_PACKETS_PER_SECOND
    assert minutes[T0 + 60].counter_resets == 2  # bytes and packets, at the same reading
    assert minutes[T0 + 120].counter_resets == 0
    assert minutes[T0 + 120].receive_bytes == 60 * RX_PER_SECOND


def test_a_huge_jump_is_never_counted() -> None:
    glitch = T0 + 100.5
    readings = [reading(t, transmit_bytes=2**62) if t == glitch else reading(t) for t in TIMES]
    minutes = summarise(readings)
    assert minutes[T0 + 60].transmit_bytes is None
    assert minutes[T0 + 60].receive_bytes == 60 * RX_PER_SECOND
    assert minutes[T0 + 60].counter_resets == 2  # the jump up, and the way back down
    assert minutes[T0 + 120].transmit_bytes == 60 * TX_PER_SECOND


def test_a_huge_jump_is_caught_when_the_ports_rate_is_unknown() -> None:
    glitch = T0 + 100.5
    readings = [reading(t, rate_bytes_per_second=None) for t in TIMES]
    readings = [
        dataclasses.replace(r, transmit_packets=2**60) if r.time == glitch else r for r in readings
    ]
    minutes = summarise(readings)
    assert minutes[T0].transmit_packets == 60 * TX_PACKETS_PER_SECOND
    assert minutes[T0 + 60].transmit_packets is None
    assert minutes[T0 + 120].transmit_packets == 60 * TX_PACKETS_PER_SECOND


def test_a_saturated_error_counter_is_unknown_not_zero() -> None:
    readings = [
        reading(t, counters=(("symbol_error", 65_535 if t > T0 + 70 else 100),)) for t in TIMES
    ]
    minutes = summarise(readings)
    assert minutes[T0].counters == (("symbol_error", 0),)
    assert minutes[T0 + 60].counters == (("symbol_error", None),)
    assert minutes[T0 + 120].counters == (("symbol_error", None),)


def test_missing_readings_are_counted_and_the_traffic_still_whole() -> None:
    minutes = summarise(reading(t) for t in TIMES if not T0 + 70 < t < T0 + 90)
    minute = minutes[T0 + 60]
    assert (minute.samples, minute.missing_samples) == (40, 20)
    assert minute.transmit_bytes == 60 * TX_PER_SECOND


def test_a_counter_the_driver_stops_showing_is_unknown_once_then_dropped() -> None:
    readings = [reading(t) if t < T0 + 30 else reading(t, hw_counters=()) for t in TIMES]
    minutes = summarise(readings)
    assert minutes[T0].hw_counters == (("out_of_buffer", None),)
    assert minutes[T0 + 60].hw_counters == (("out_of_buffer", None),)
    assert minutes[T0 + 120].hw_counters == ()


def test_ports_are_kept_apart() -> None:
    summariser = PortMinuteSummariser(interval_seconds=1.0)
    closed: list[PortMinute] = []
    for t in TIMES[:130]:
        closed += summariser.add(reading(t))
        closed += summariser.add(reading(t, port=2, transmit_bytes=0))
    second = [m for m in closed if m.port == 2 and m.start == T0]
    assert [m.transmit_bytes for m in second] == [0]
    assert [m.transmit_bytes for m in closed if m.port == 1 and m.start == T0] == [
        60 * TX_PER_SECOND
    ]


# --- properties ---------------------------------------------------------------------------------

_second = st.tuples(
    st.integers(0, 10**6),  # errors counted this second
    st.booleans(),  # the counter was reset (restarted from 0) just before this reading
    st.booleans(),  # this reading was missed
)


@given(st.lists(_second, min_size=2, max_size=300), st.integers(0, 2**32 - 1))
def test_counter_figures_are_never_negative_nor_more_than_was_counted(
    seconds: list[tuple[int, bool, bool]], start: int
) -> None:
    """A 32-bit counter, read most seconds: without resets the minutes never count more than
    was counted; a reset near the top of the range is told from a wrap only by the bound, so it
    may add at most one wrap's worth (docs/reports.md)."""
    summariser = PortMinuteSummariser(interval_seconds=1.0)
    value, counted, resets, minutes = start, 0, 0, []
    for k, (step, reset, missed) in enumerate(seconds):
        value = step if reset else (value + step) % 2**32
        counted += step
        resets += reset
        if not missed:
            sample = reading(T0 + 0.5 + k, hw_counters=(("out_of_sequence", value),))
            minutes += summariser.add(sample)
    minutes += summariser.close(T0 + 86_400)
    figures = [f for m in minutes for _, f in m.hw_counters if f is not None]
    assert all(f >= 0 for f in figures)
    assert sum(figures) <= counted + resets * 2**32
    if not resets:
        assert all(f <= 63 * 10**6 for f in figures)  # a minute and its straddling readings
        assert all(m.counter_resets == 0 for m in minutes)
