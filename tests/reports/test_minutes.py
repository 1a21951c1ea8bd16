"""The per-minute bookkeeping: which minutes close when, gaps, silence and a clock that steps."""

from __future__ import annotations

import dataclasses

import pytest

from lens.reports.minutes import Device, MinuteSummariser
from lens.reports.timeline import RESTART_SECONDS

T0 = 1_800_000_000


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    key: str
    time: float


Closed = tuple[str, int, int]  # (device, minute start, readings in it)


class Recording(MinuteSummariser[str, Reading, Device, Closed]):
    """Emits each minute's reading count and records the order of the hooks."""

    def __init__(self, *, silent_minutes: int = 15) -> None:
        super().__init__(interval_seconds=1.0, silent_minutes=silent_minutes)
        self.calls: list[tuple[str, float]] = []

    def _key(self, sample: Reading) -> str:
        return sample.key

    def _start(self, key: str, start: int) -> Device:
        return Device(start)

    def _stage(self, device: Device, sample: Reading) -> None:
        self.calls.append(("stage", sample.time))

    def _commit(self, device: Device, sample: Reading) -> None:
        self.calls.append(("commit", sample.time))

    def _emit(self, key: str, device: Device) -> Closed:
        self.calls.append(("emit", device.open))
        return (key, device.open, device.samples)


def feed(summariser: Recording, times: list[float], key: str = "gpu0") -> list[Closed]:
    return [minute for t in times for minute in summariser.add(Reading(key=key, time=t))]


def test_a_reading_of_a_later_minute_closes_the_open_one() -> None:
    summariser = Recording()
    assert feed(summariser, [T0 + 1.5, T0 + 30.0, T0 + 59.9]) == []
    assert feed(summariser, [T0 + 60.2]) == [("gpu0", T0, 3)]


def test_the_reading_is_staged_before_the_minute_closes_and_counted_after() -> None:
    summariser = Recording()
    feed(summariser, [T0 + 59.5, T0 + 60.5])
    assert summariser.calls == [
        ("stage", T0 + 59.5),
        ("commit", T0 + 59.5),
        ("stage", T0 + 60.5),
        ("emit", T0),
        ("commit", T0 + 60.5),
    ]


def test_minutes_without_readings_between_two_readings_are_reported_empty() -> None:
    summariser = Recording()
    closed = feed(summariser, [T0 + 5.0, T0 + 200.0])
    assert closed == [("gpu0", T0, 1), ("gpu0", T0 + 60, 0), ("gpu0", T0 + 120, 0)]


def test_a_gap_longer_than_the_silence_limit_reports_none_of_the_minutes_in_it() -> None:
    summariser = Recording(silent_minutes=3)
    closed = feed(summariser, [T0 + 5.0, T0 + 5 * 60 + 1.0, T0 + 6 * 60 + 1.0])
    assert closed == [("gpu0", T0, 1), ("gpu0", T0 + 300, 1)]


def test_a_reading_no_newer_than_the_last_is_dropped_and_counted() -> None:
    summariser = Recording()
    feed(summariser, [T0 + 10.0, T0 + 61.0])
    assert feed(summariser, [T0 + 61.0, T0 + 59.0, T0 + 62.0]) == []
    assert summariser.dropped_samples == 2
    assert feed(summariser, [T0 + 120.0]) == [("gpu0", T0 + 60, 2)]


def test_a_clock_stepping_far_back_reports_the_open_minute_and_starts_afresh() -> None:
    summariser = Recording()
    feed(summariser, [T0 + 1000.0, T0 + 1001.0])
    back = T0 + 1001.0 - RESTART_SECONDS - 1
    assert feed(summariser, [back]) == [("gpu0", T0 + 960, 2)]
    assert summariser.dropped_samples == 0
    assert feed(summariser, [back + 60]) == [("gpu0", T0 + 360, 1)]


def test_devices_keep_their_own_minutes() -> None:
    summariser = Recording()
    feed(summariser, [T0 + 1.0, T0 + 2.0], key="a")
    feed(summariser, [T0 + 1.5], key="b")
    assert feed(summariser, [T0 + 61.0], key="b") == [("b", T0, 1)]
    assert feed(summariser, [T0 + 61.0], key="a") == [("a", T0, 2)]


def test_the_clock_closes_a_minute_once_no_reading_could_bracket_its_end() -> None:
    summariser = Recording()
    feed(summariser, [T0 + 59.0])
    assert summariser.close(T0 + 62.49) == ()  # 2.5 cycles past the end
    assert summariser.close(T0 + 62.5) == (("gpu0", T0, 1),)
    assert summariser.close(T0 + 62.5) == ()


def test_a_silent_device_is_reported_empty_for_a_while_then_forgotten() -> None:
    summariser = Recording(silent_minutes=2)
    feed(summariser, [T0 + 30.0])
    assert summariser.close(T0 + 86_400) == (
        ("gpu0", T0, 1),
        ("gpu0", T0 + 60, 0),
        ("gpu0", T0 + 120, 0),
    )
    assert summariser.close(T0 + 2 * 86_400) == ()
    # Back again: a device seen for the first time.
    assert feed(summariser, [T0 + 86_400.5, T0 + 86_460.5]) == [("gpu0", T0 + 86_400, 1)]


def test_a_device_that_reports_again_is_no_longer_silent() -> None:
    summariser = Recording(silent_minutes=2)
    feed(summariser, [T0 + 30.0])
    summariser.close(T0 + 123.0)  # closes T0 and T0 + 60, one silent minute
    assert feed(summariser, [T0 + 150.0, T0 + 200.0]) == [("gpu0", T0 + 120, 1)]
    assert summariser.close(T0 + 243.0) == (("gpu0", T0 + 180, 1),)
    assert summariser.close(T0 + 303.0) == (("gpu0", T0 + 240, 0),)


def test_a_silence_limit_below_one_minute_is_refused() -> None:
    with pytest.raises(ValueError, match="silent_minutes"):
        Recording(silent_minutes=0)
