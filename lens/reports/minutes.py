"""The per-minute bookkeeping shared by the GPU and RDMA port summarisers.

MinuteSummariser keeps one open minute per device, fed one reading at a time from the node
agent's collection cycle, and closes it when a reading of a later minute arrives or, for a device
that stopped reporting, when the clock has passed it (`close`). gpuminutes.py and portminutes.py
say what a minute holds. The rules for late readings, gaps and silent devices are in
docs/reports.md ("Minutes, gaps and the clock").
"""

from __future__ import annotations

import abc
import math
from typing import Generic, Protocol, TypeVar

from lens.reports.timeline import MINUTE, RESTART_SECONDS, Cadence, minute_of

# A device silent for this many whole minutes is forgotten (it was removed, or its reading
# fails); a gap longer than this between two readings reports none of the minutes in between.
SILENT_MINUTES = 15


class Timed(Protocol):
    @property
    def time(self) -> float: ...


class Device:
    """What the base keeps of one device: its open minute and the times of its readings."""

    __slots__ = ("last", "open", "samples", "silent")

    def __init__(self, start: int) -> None:
        self.open = start  # start of the open minute
        self.last = -math.inf  # time of the last reading taken
        self.samples = 0  # readings in the open minute
        self.silent = 0  # whole minutes closed in a row without a reading


KeyT = TypeVar("KeyT")
SampleT = TypeVar("SampleT", bound=Timed)
DeviceT = TypeVar("DeviceT", bound=Device)
MinuteT = TypeVar("MinuteT")


class MinuteSummariser(abc.ABC, Generic[KeyT, SampleT, DeviceT, MinuteT]):
    """Readings in, closed minutes out, one device at a time; not thread-safe (one cycle feeds
    it). Subclasses stage a reading (work out its increases), emit a minute and commit."""

    def __init__(self, *, interval_seconds: float, silent_minutes: int = SILENT_MINUTES) -> None:
        if silent_minutes < 1:
            raise ValueError("silent_minutes must be at least 1")
        self.cadence = Cadence.of(interval_seconds)
        self._silent_minutes = silent_minutes
        self._devices: dict[KeyT, DeviceT] = {}
        self.dropped_samples = 0  # readings no newer than the last of their device

    def add(self, sample: SampleT) -> tuple[MinuteT, ...]:
        """Take one reading; the minutes it closed, oldest first (usually none)."""
        key, time = self._key(sample), sample.time
        device = self._devices.get(key)
        closed: tuple[MinuteT, ...] = ()
        if device is not None and time <= device.last:
            if device.last - time <= RESTART_SECONDS:
                self.dropped_samples += 1
                return closed
            # The clock stepped back: report what the open minute has and start afresh.
            closed = (self._close_minute(key, device),)
            device = None
        minute = minute_of(time)
        if device is None:
            device = self._devices[key] = self._start(key, minute)
        self._stage(device, sample)
        if minute > device.open:
            closed = (*closed, *self._close_until(key, device, minute))
        self._commit(device, sample)
        device.last = time
        device.samples += 1
        device.silent = 0
        return closed

    def close(self, now: float) -> tuple[MinuteT, ...]:
        """Close the minutes the clock has left behind for devices that stopped reporting: a
        minute closes once a reading after its end could no longer bracket it."""
        closed: list[MinuteT] = []
        wait = MINUTE + self.cadence.bracket_seconds
        for key, device in list(self._devices.items()):
            while device.open + wait <= now:
                closed.append(self._close_minute(key, device))
                if device.silent >= self._silent_minutes:
                    del self._devices[key]
                    break
        return tuple(closed)

    def _close_until(self, key: KeyT, device: DeviceT, start: int) -> list[MinuteT]:
        closed = [self._close_minute(key, device)]
        empty = (start - device.open) // MINUTE
        if empty > self._silent_minutes:
            device.open = start  # a jump of the clock or a long silence: nothing to report
        else:
            closed.extend(self._close_minute(key, device) for _ in range(empty))
        return closed

    def _close_minute(self, key: KeyT, device: DeviceT) -> MinuteT:
        minute = self._emit(key, device)
        device.silent = 0 if device.samples else device.silent + 1
        device.open += MINUTE
        device.samples = 0
        return minute

    @abc.abstractmethod
    def _key(self, sample: SampleT) -> KeyT:
        """The device a reading is of."""

    @abc.abstractmethod
    def _start(self, key: KeyT, start: int) -> DeviceT:
        """A new device's state, its open minute starting at `start`."""

    @abc.abstractmethod
    def _stage(self, device: DeviceT, sample: SampleT) -> None:
        """Work out the reading's counter increases, before any minute closes."""

    @abc.abstractmethod
    def _commit(self, device: DeviceT, sample: SampleT) -> None:
        """Count the staged reading in the open minute."""

    @abc.abstractmethod
    def _emit(self, key: KeyT, device: DeviceT) -> MinuteT:
        """The open minute's summary (`device.samples` readings), closed with the staged
        reading if there is one; then clear the per-minute figures."""
