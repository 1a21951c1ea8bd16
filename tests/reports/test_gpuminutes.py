"""GPU minutes against a load profile whose figures are known in closed form."""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.reports.gpuminutes import GpuMinute, GpuMinuteSummariser
from lens.reports.samples import GpuSample, Holder, Holding

T0 = 1_800_000_000  # a UTC minute's start (2027-01-15 08:00:00)
GIB = 2**30
ENERGY_AT_START = 123_456_789.0  # joules the counter shows before the profile (a long uptime)
PERIOD = 240.0  # seconds, of the utilization's sine


def utilization(t: float) -> float:
    return 0.5 + 0.4 * math.sin(2 * math.pi * (t - T0) / PERIOD)


def utilization_integral(a: float, b: float) -> float:
    k = 2 * math.pi / PERIOD
    return 0.5 * (b - a) + 0.4 / k * (math.cos(k * (a - T0)) - math.cos(k * (b - T0)))


# (phase end, power W, memory activity, VRAM bytes); phases change on whole seconds, away from
# minute boundaries.
PHASES = (
    (T0 + 90, 300.0, 0.2, 10 * GIB),
    (T0 + 200, 700.0, 0.6, 30 * GIB),
    (math.inf, 450.0, 0.4, 20 * GIB),
)


def phase(t: float) -> tuple[float, float, int]:
    for end, power, activity, vram in PHASES:
        if t < end:
            return power, activity, vram
    raise AssertionError("unreachable")


def energy_integral(a: float, b: float) -> float:
    """Joules the profile uses over [a, b): power is constant within each phase."""
    total, start = 0.0, -math.inf
    for end, power, _activity, _vram in PHASES:
        low, high = max(a, start), min(b, end)
        if high > low:
            total += power * (high - low)
        start = end
    return total


def gpu_temperature(t: float) -> float:
    return 40.0 + 20.0 * (t - T0) / 300.0


def sample(t: float, **overrides: Any) -> GpuSample:
    """The profile's reading at `t`, with `overrides` in place of some of its figures."""
    power, activity, vram = phase(t)
    reading = GpuSample(
        uuid="GPU-1",
        index=0,
        pci_bus_id="0000:0c:00.0",
        time=t,
        utilization_ratio=utilization(t),
        memory_activity_ratio=activity,
        vram_used_bytes=vram,
        power_watts=power,
        energy_joules=ENERGY_AT_START + energy_integral(T0 - 3600, t),
        temperatures_celsius=(("gpu", gpu_temperature(t)), ("hbm", 70.0 if t < T0 + 120 else 85.0)),
    )
    return dataclasses.replace(reading, **overrides)


# The agent's cycle fires half a second into every second, from 4.5 s before T0 to T0 + 305.
TIMES = [T0 - 4.5 + k for k in range(310)]
HOLDER_A = Holder(
    cluster="c",
    namespace="ml",
    pod_name="train-a",
    container="main",
    pod_uid="ua",
    container_id="ca",
)
HOLDER_B = Holder(
    cluster="c",
    namespace="ml",
    pod_name="train-b",
    container="main",
    pod_uid="ub",
    container_id="cb",
)
HOLDINGS = (
    Holding(gpu_uuid="GPU-1", holder=HOLDER_A, since=T0 - 3600, until=T0 + 130),
    Holding(gpu_uuid="GPU-1", holder=HOLDER_B, since=T0 + 130),
)


def summarise(
    samples: Iterable[GpuSample], holdings: Sequence[Holding] = HOLDINGS
) -> list[GpuMinute]:
    summariser = GpuMinuteSummariser(
        interval_seconds=1.0, holdings=lambda uuid: [h for h in holdings if h.gpu_uuid == uuid]
    )
    return [minute for s in samples for minute in summariser.add(s)]


def close_to(value: float | None, truth: float) -> bool:
    return value is not None and math.isclose(value, truth, rel_tol=0.005)


def dense_max(function: Callable[[float], float], a: float, b: float) -> float:
    """The profile's greatest value over [a, b], by evaluating it every 10 ms."""
    steps = round((b - a) * 100)
    return max(function(a + (b - a) * i / steps) for i in range(steps + 1))


def test_each_minute_matches_the_load_profile() -> None:
    minutes = summarise(sample(t) for t in TIMES)
    assert [m.start for m in minutes] == [T0 - 60 + 60 * i for i in range(6)]
    for minute in minutes[1:]:
        a, b = minute.start, minute.start + 60
        first, last = a + 0.5, b - 0.5  # the minute's first and last readings
        assert minute.samples == minute.expected_samples == 60
        assert minute.missing_samples == 0
        assert close_to(minute.utilization_mean_ratio, utilization_integral(a, b) / 60)
        assert close_to(minute.utilization_max_ratio, dense_max(utilization, first, last))
        assert close_to(minute.power_mean_watts, energy_integral(a, b) / 60)
        assert close_to(minute.energy_joules, energy_integral(a, b))
        in_minute = [phase(a + s)[1:] for s in range(60)]
        assert close_to(minute.memory_activity_mean_ratio, sum(p[0] for p in in_minute) / 60)
        assert close_to(minute.vram_used_mean_bytes, sum(p[1] for p in in_minute) / 60)
        assert minute.vram_used_max_bytes == max(p[1] for p in in_minute)
        temperatures = dict(minute.temperatures_max_celsius)
        assert close_to(temperatures["gpu"], gpu_temperature(last))
        assert temperatures["hbm"] == (70.0 if b <= T0 + 120 else 85.0)


def test_the_profile_has_the_figures_a_reader_expects() -> None:
    """Spot values worked out by hand, so the closed forms above are themselves checked."""
    minutes = {m.start: m for m in summarise(sample(t) for t in TIMES)}
    second = minutes[T0 + 60]  # 30 s at 300 W then 30 s at 700 W
    assert second.power_mean_watts == pytest.approx(500.0)
    assert second.energy_joules == pytest.approx(30_000.0)
    assert second.vram_used_max_bytes == 30 * GIB
    assert minutes[T0 + 240].energy_joules == pytest.approx(450.0 * 60)


def test_the_first_partial_minute_says_it_is_partial_and_has_no_energy() -> None:
    first = summarise(sample(t) for t in TIMES)[0]
    assert first.start == T0 - 60
    assert (first.samples, first.expected_samples, first.missing_samples) == (5, 60, 55)
    assert first.energy_joules is None  # no reading before the minute began
    assert first.power_mean_watts == pytest.approx(300.0)


def test_minutes_are_utc_minutes_and_a_reading_on_the_boundary_opens_the_next() -> None:
    summariser = GpuMinuteSummariser(interval_seconds=1.0, holdings=lambda uuid: ())
    assert summariser.add(sample(T0 + 59.999)) == ()
    (closed,) = summariser.add(sample(T0 + 60.0))
    assert closed.start == T0
    assert datetime.datetime.fromtimestamp(closed.start, datetime.UTC).second == 0
    assert closed.samples == 1


def test_missing_samples_are_counted_and_the_means_are_over_those_present() -> None:
    gap = range(T0 + 70, T0 + 80)  # ten readings of the second minute lost
    minutes = {m.start: m for m in summarise(sample(t) for t in TIMES if math.floor(t) not in gap)}
    minute = minutes[T0 + 60]
    assert (minute.samples, minute.missing_samples) == (50, 10)
    present = utilization_integral(T0 + 60, T0 + 70) + utilization_integral(T0 + 80, T0 + 120)
    assert close_to(minute.utilization_mean_ratio, present / 50)
    assert minute.power_mean_watts == pytest.approx((20 * 300 + 30 * 700) / 50)
    # The counter keeps counting through the gap: the minute's energy is still whole.
    assert close_to(minute.energy_joules, energy_integral(T0 + 60, T0 + 120))


def test_unknown_readings_stay_unknown_never_zero() -> None:
    bare = [
        sample(
            t, utilization_ratio=None, energy_joules=None, power_watts=None, temperatures_celsius=()
        )
        for t in TIMES
    ]
    minute = summarise(bare)[2]
    assert minute.samples == 60
    assert minute.utilization_mean_ratio is None
    assert minute.utilization_max_ratio is None
    assert minute.power_mean_watts is None
    assert minute.energy_joules is None
    assert minute.temperatures_max_celsius == ()
    assert minute.vram_used_max_bytes is not None


def test_a_figure_known_in_some_readings_is_the_mean_of_those() -> None:
    readings = [
        sample(t, power_watts=None if math.floor(t) % 2 else 100.0 + math.floor(t) % 4)
        for t in TIMES
    ]
    minute = summarise(readings)[2]
    assert minute.power_mean_watts == pytest.approx(101.0)  # 100 and 102, alternately


def test_an_energy_counter_reset_leaves_that_minute_unknown_and_its_neighbours_whole() -> None:
    reset_at = T0 + 150  # the driver reloads: the counter restarts from 0

    def energy(t: float) -> float:
        if t < reset_at:
            return ENERGY_AT_START + energy_integral(T0 - 3600, t)
        return energy_integral(reset_at, t)

    minutes = {m.start: m for m in summarise(sample(t, energy_joules=energy(t)) for t in TIMES)}
    assert minutes[T0 + 120].energy_joules is None
    assert close_to(minutes[T0 + 60].energy_joules, energy_integral(T0 + 60, T0 + 120))
    assert close_to(minutes[T0 + 180].energy_joules, energy_integral(T0 + 180, T0 + 240))


def test_an_implausible_energy_jump_is_unknown_not_counted() -> None:
    readings = [sample(t, energy_joules=1e15) if t == T0 + 100.5 else sample(t) for t in TIMES]
    minutes = {m.start: m for m in summarise(readings)}
    # The jump and the way back down (which looks like a reset) both fall in the second minute.
    assert minutes[T0 + 60].energy_joules is None
    assert close_to(minutes[T0 + 120].energy_joules, energy_integral(T0 + 120, T0 + 180))


def test_a_long_gap_across_a_boundary_leaves_the_energy_on_both_sides_unknown() -> None:
    minutes = {
        m.start: m for m in summarise(sample(t) for t in TIMES if not T0 + 115 < t < T0 + 125)
    }
    assert minutes[T0 + 60].energy_joules is None
    assert minutes[T0 + 120].energy_joules is None
    assert close_to(minutes[T0 + 180].energy_joules, energy_integral(T0 + 180, T0 + 240))


def test_one_missed_cycle_at_the_boundary_is_bridged() -> None:
    minutes = {m.start: m for m in summarise(sample(t) for t in TIMES if t != T0 + 120.5)}
    assert close_to(minutes[T0 + 60].energy_joules, energy_integral(T0 + 60, T0 + 120))
    assert close_to(minutes[T0 + 120].energy_joules, energy_integral(T0 + 120, T0 + 180))


def test_each_minute_is_attributed_to_its_holders_by_the_seconds_held() -> None:
    minutes = {m.start: m for m in summarise(sample(t) for t in TIMES)}
    assert [(s.holder, s.seconds) for s in minutes[T0 + 60].held_by.shares] == [(HOLDER_A, 60.0)]
    handover = minutes[T0 + 120].held_by
    assert [(s.holder, s.seconds) for s in handover.shares] == [(HOLDER_A, 10.0), (HOLDER_B, 50.0)]
    assert handover.idle_seconds == 0.0


def test_each_gpu_has_its_own_minutes_and_identity() -> None:
    summariser = GpuMinuteSummariser(interval_seconds=1.0, holdings=lambda uuid: ())
    closed = []
    for t in TIMES[:70]:
        closed += summariser.add(sample(t))
        closed += summariser.add(
            sample(t, uuid="GPU-2", index=1, pci_bus_id="0000:0d:00.0", power_watts=50.0)
        )
    second = [m for m in closed if m.uuid == "GPU-2"]
    assert [(m.start, m.index, m.pci_bus_id) for m in second] == [
        (T0 - 60, 1, "0000:0d:00.0"),
        (T0, 1, "0000:0d:00.0"),
    ]
    assert [m.power_mean_watts for m in second] == [50.0, 50.0]
    assert [m.uuid for m in closed if m.power_mean_watts != 50.0] == ["GPU-1", "GPU-1"]


def test_a_gpu_that_stops_reporting_has_its_minutes_closed_by_the_clock() -> None:
    summariser = GpuMinuteSummariser(
        interval_seconds=1.0, holdings=lambda uuid: HOLDINGS, silent_minutes=3
    )
    for t in TIMES[:40]:
        summariser.add(sample(t))
    assert summariser.close(T0 + 62.4) == ()  # a reading could still bracket the boundary
    (minute,) = summariser.close(T0 + 62.5)
    assert (minute.start, minute.samples, minute.energy_joules) == (T0, 35, None)
    empty = summariser.close(T0 + 3600)
    assert [(m.start, m.samples) for m in empty] == [(T0 + 60, 0), (T0 + 120, 0), (T0 + 180, 0)]
    assert all(m.utilization_mean_ratio is None and m.energy_joules is None for m in empty)
    assert empty[1].held_by.shares[0].seconds == 10.0  # held while silent: still attributed
    assert summariser.close(T0 + 7200) == ()  # forgotten


def test_a_collection_interval_outside_a_minute_is_refused() -> None:
    with pytest.raises(ValueError, match="not in"):
        GpuMinuteSummariser(interval_seconds=0, holdings=lambda uuid: ())


# --- properties ---------------------------------------------------------------------------------

_ratio = st.one_of(st.none(), st.floats(0, 1))
_reading = st.tuples(
    st.floats(0.05, 90.0),  # seconds since the previous reading
    _ratio,
    st.one_of(st.none(), st.integers(0, 192 * GIB)),
    st.one_of(st.none(), st.floats(0, 1500)),
    st.one_of(st.none(), st.floats(20, 110)),
)


@given(st.lists(_reading, min_size=1, max_size=200), st.floats(0, 59.99))
def test_every_minute_summarises_exactly_its_readings(readings: list[tuple], offset: float) -> None:
    summariser = GpuMinuteSummariser(interval_seconds=1.0, holdings=lambda uuid: ())
    t, fed, minutes = T0 + offset, [], []
    for gap, ratio, vram, power, celsius in readings:
        t += gap
        s = sample(
            t,
            utilization_ratio=ratio,
            vram_used_bytes=vram,
            power_watts=power,
            energy_joules=None,
            temperatures_celsius=() if celsius is None else (("gpu", celsius),),
        )
        fed.append(s)
        minutes += summariser.add(s)
    minutes += summariser.close(t + 3600 * 24)
    starts = [m.start for m in minutes]
    assert starts == sorted(set(starts)) and all(start % 60 == 0 for start in starts)
    for minute in minutes:
        inside = [s for s in fed if minute.start <= s.time < minute.start + 60]
        assert minute.samples == len(inside)
        _check_figure(
            minute.utilization_mean_ratio,
            minute.utilization_max_ratio,
            [s.utilization_ratio for s in inside],
        )
        _check_figure(
            minute.vram_used_mean_bytes,
            minute.vram_used_max_bytes,
            [s.vram_used_bytes for s in inside],
        )
        _check_figure(minute.power_mean_watts, None, [s.power_watts for s in inside])
        celsius = [c for s in inside for _, c in s.temperatures_celsius]
        assert dict(minute.temperatures_max_celsius).get("gpu") == (
            max(celsius) if celsius else None
        )
    assert sum(m.samples for m in minutes) == len(fed)


def _check_figure(
    mean: float | None, maximum: float | None, values: list[float | int | None]
) -> None:
    known = [v for v in values if v is not None]
    if not known:
        assert mean is None and maximum is None
        return
    assert mean is not None and min(known) <= mean <= max(known)
    assert maximum is None or maximum == max(known)


@given(
    st.lists(st.floats(0, 1200), min_size=2, max_size=300),
    st.lists(st.integers(0, 299), max_size=5),
)
def test_energy_is_never_negative_and_adds_up_to_the_counter(
    powers: list[float], resets: list[int]
) -> None:
    summariser = GpuMinuteSummariser(interval_seconds=1.0, holdings=lambda uuid: ())
    counter, minutes = 5_000.0, []
    for k, power in enumerate(powers):
        counter = 0.0 if k in resets else counter + power
        minutes += summariser.add(sample(T0 + 0.5 + k, energy_joules=counter))
    energies = [m.energy_joules for m in minutes if m.energy_joules is not None]
    assert all(e >= 0 for e in energies)
    if not resets:
        assert sum(energies) <= sum(powers) + 1e-6
