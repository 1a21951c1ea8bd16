"""Idle GPUs: a GPU held by a pod whose utilization stayed under a floor for a whole window.

Fed the held GPU-minutes in time order (a GPU-minute once per pod that held the GPU in it), the
tracker follows each (node, GPU, pod) stretch of consecutive minutes under the floor. A stretch
that reaches the window is an idle interval from its first minute; it grows while the minutes
stay under the floor and ends at the first minute that is not: one over the floor, one of
unknown utilization (nothing unknown counts as idle), or a minute missing (the pod no longer
held the GPU, or no report came).
"""

from __future__ import annotations

import dataclasses
import datetime

MINUTE = datetime.timedelta(minutes=1)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Holding:
    """Which pod held which GPU: the key of a stretch."""

    node: str
    gpu_uuid: str
    pod_uid: str
    namespace: str
    pod_name: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HeldMinute:
    holding: Holding
    minute: datetime.datetime  # the minute's start
    utilization: float | None  # the GPU's mean over the minute (ratio); None: unknown


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class IdleInterval:
    """[start, end) of a GPU idle while held by a pod; `open` while it may still grow."""

    holding: Holding
    start: datetime.datetime
    end: datetime.datetime
    minutes: int
    utilization_sum: float
    open: bool

    @property
    def utilization_mean(self) -> float:
        return self.utilization_sum / self.minutes if self.minutes else 0.0


@dataclasses.dataclass(slots=True)
class _Stretch:
    start: datetime.datetime
    end: datetime.datetime
    minutes: int
    utilization_sum: float


class IdleTracker:
    """The stretches under way, fed minute by minute; hands back the intervals that changed."""

    def __init__(self, *, floor: float, window_minutes: int) -> None:
        if window_minutes < 1:
            raise ValueError("window_minutes must be at least 1")
        self._floor = floor
        self._window = window_minutes
        self._stretches: dict[Holding, _Stretch] = {}

    def resume(self, interval: IdleInterval) -> None:
        """Carry on an interval stored as open (after a restart or a change of leader)."""
        self._stretches[interval.holding] = _Stretch(
            interval.start, interval.end, interval.minutes, interval.utilization_sum
        )

    def feed(self, minutes: list[HeldMinute], *, through: datetime.datetime) -> list[IdleInterval]:
        """Take `minutes` (all those held up to `through`, the end of the last minute read, in
        time order) and return every interval that began, grew or ended."""
        changed: dict[tuple[Holding, datetime.datetime], IdleInterval] = {}
        for held in minutes:
            stretch = self._stretches.get(held.holding)
            if stretch is not None and held.minute != stretch.end:
                self._end(held.holding, changed)  # a gap: a minute not held, or not reported
                stretch = None
            if held.utilization is None or held.utilization >= self._floor:
                if stretch is not None:
                    self._end(held.holding, changed)
                continue
            if stretch is None:
                stretch = self._stretches[held.holding] = _Stretch(held.minute, held.minute, 0, 0)
            stretch.end = held.minute + MINUTE
            stretch.minutes += 1
            stretch.utilization_sum += held.utilization
            if stretch.minutes >= self._window:
                changed[held.holding, stretch.start] = self._interval(
                    held.holding, stretch, open=True
                )
        for holding in [h for h, s in self._stretches.items() if s.end < through]:
            self._end(holding, changed)  # no minute since: the hold ended
        return list(changed.values())

    def open_intervals(self) -> list[IdleInterval]:
        """The intervals under way now (for gauges)."""
        return [
            self._interval(holding, stretch, open=True)
            for holding, stretch in self._stretches.items()
            if stretch.minutes >= self._window
        ]

    def _end(
        self, holding: Holding, changed: dict[tuple[Holding, datetime.datetime], IdleInterval]
    ) -> None:
        stretch = self._stretches.pop(holding)
        if stretch.minutes >= self._window:
            changed[holding, stretch.start] = self._interval(holding, stretch, open=False)

    @staticmethod
    def _interval(holding: Holding, stretch: _Stretch, *, open: bool) -> IdleInterval:
        return IdleInterval(
            holding=holding,
            start=stretch.start,
            end=stretch.end,
            minutes=stretch.minutes,
            utilization_sum=stretch.utilization_sum,
            open=open,
        )
