"""Each GPU's use per UTC minute, from the node agent's own collection cycle.

The agent feeds every GpuSample (samples.py) to a GpuMinuteSummariser as it collects and gets a
GpuMinute back when a minute completes: means and maxima over the minute's readings, energy from
the hardware's counter, and who held the GPU (attribution.py). The rules are in docs/reports.md.
Cheap by design: a reading costs a few additions and no allocation.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable

from lens.reports import attribution, minutes
from lens.reports.samples import GpuSample, Holding
from lens.reports.timeline import MINUTE, Tally

# An energy counter rising faster than this (the largest accelerator boards draw about 1.5 kW)
# was reset or misread; its increase is unknown.
MAX_PLAUSIBLE_WATTS = 10_000.0

Holdings = Callable[[str], Iterable[Holding]]  # a GPU's uuid -> its holdings, ended ones too


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuMinute:
    """One GPU over one UTC minute. Each mean or maximum is over the minute's readings in which
    that figure was known; None: known in none of them."""

    start: int  # epoch seconds, a multiple of 60
    uuid: str
    index: int
    pci_bus_id: str
    samples: int  # readings taken in the minute
    expected_samples: int  # readings a full minute holds at the agent's collection interval
    utilization_mean_ratio: float | None = None
    utilization_max_ratio: float | None = None
    memory_activity_mean_ratio: float | None = None
    vram_used_mean_bytes: float | None = None
    vram_used_max_bytes: int | None = None
    power_mean_watts: float | None = None
    energy_joules: float | None = None  # from the energy counter; None where it is unknown
    temperatures_max_celsius: tuple[tuple[str, float], ...] = ()
    held_by: attribution.Attribution

    @property
    def missing_samples(self) -> int:
        return max(0, self.expected_samples - self.samples)


class _Figure:
    """Count, sum, least and greatest of one reading over the open minute."""

    __slots__ = ("count", "high", "low", "total")

    def __init__(self) -> None:
        self.count = 0
        self.total: float = 0
        self.low: float = math.inf
        self.high: float = -math.inf

    def add(self, value: float | None) -> None:
        if value is None or not math.isfinite(value):
            return  # unknown; NaN from a driver would poison the sum
        self.count += 1
        self.total += value
        self.low = min(self.low, value)
        self.high = max(self.high, value)

    def mean(self) -> float | None:
        if not self.count:
            return None
        # Clamped: rounding may put the mean of equal readings a hair outside them.
        return min(self.high, max(self.low, self.total / self.count))

    def max(self) -> float | None:
        return self.high if self.count else None


class _Gpu(minutes.Device):
    __slots__ = (
        "energy",
        "energy_value",
        "index",
        "memory_activity",
        "next_increase",
        "next_time",
        "pci_bus_id",
        "power",
        "temperatures",
        "utilization",
        "vram",
    )

    def __init__(self, start: int) -> None:
        super().__init__(start)
        self.index = 0
        self.pci_bus_id = ""
        self.energy = Tally(whole=False)
        self.energy_value: float | None = None  # the counter at its last reading
        self.next_time: float | None = None  # the staged reading's, when it has energy
        self.next_increase: float | None = None
        self.clear()

    def clear(self) -> None:
        self.utilization = _Figure()
        self.memory_activity = _Figure()
        self.vram = _Figure()
        self.power = _Figure()
        self.temperatures: dict[str, float] = {}


class GpuMinuteSummariser(minutes.MinuteSummariser[str, GpuSample, _Gpu, GpuMinute]):
    """Every GPU of a node, per minute. `holdings` gives a GPU's holdings when one of its
    minutes closes: it must still list containers that ended during that minute."""

    def __init__(
        self,
        *,
        interval_seconds: float,
        holdings: Holdings,
        silent_minutes: int = minutes.SILENT_MINUTES,
    ) -> None:
        super().__init__(interval_seconds=interval_seconds, silent_minutes=silent_minutes)
        self._holdings = holdings

    def _key(self, sample: GpuSample) -> str:
        return sample.uuid

    def _start(self, key: str, start: int) -> _Gpu:
        return _Gpu(start)

    def _stage(self, device: _Gpu, sample: GpuSample) -> None:
        value = sample.energy_joules
        if value is None or not math.isfinite(value):
            device.next_time = device.next_increase = None
            return
        device.next_time = sample.time
        device.next_increase = None
        previous, last = device.energy_value, device.energy.last
        if previous is not None and last is not None:
            step = value - previous
            # Going down is a reset (a driver reload): the energy up to it is lost, not guessed.
            if 0 <= step <= MAX_PLAUSIBLE_WATTS * (sample.time - last + 1):
                device.next_increase = step

    def _commit(self, device: _Gpu, sample: GpuSample) -> None:
        device.index, device.pci_bus_id = sample.index, sample.pci_bus_id
        device.utilization.add(sample.utilization_ratio)
        device.memory_activity.add(sample.memory_activity_ratio)
        device.vram.add(sample.vram_used_bytes)
        device.power.add(sample.power_watts)
        temperatures = device.temperatures
        for sensor, celsius in sample.temperatures_celsius:
            if math.isfinite(celsius) and celsius > temperatures.get(sensor, -math.inf):
                temperatures[sensor] = celsius
        if device.next_time is not None:
            device.energy.advance(device.next_time, device.next_increase)
            device.energy_value = sample.energy_joules
            device.next_time = device.next_increase = None

    def _emit(self, key: str, device: _Gpu) -> GpuMinute:
        start, end = device.open, device.open + MINUTE
        energy = device.energy.close(
            end,
            time=device.next_time,
            increase=device.next_increase,
            limit=self.cadence.bracket_seconds,
        )
        vram_max = device.vram.max()
        minute = GpuMinute(
            start=start,
            uuid=key,
            index=device.index,
            pci_bus_id=device.pci_bus_id,
            samples=device.samples,
            expected_samples=self.cadence.expected_samples,
            utilization_mean_ratio=device.utilization.mean(),
            utilization_max_ratio=device.utilization.max(),
            memory_activity_mean_ratio=device.memory_activity.mean(),
            vram_used_mean_bytes=device.vram.mean(),
            vram_used_max_bytes=None if vram_max is None else int(vram_max),
            power_mean_watts=device.power.mean(),
            energy_joules=None if energy is None else float(energy),
            temperatures_max_celsius=tuple(sorted(device.temperatures.items())),
            held_by=attribution.attribute(self._holdings(key), start=start, end=end),
        )
        device.clear()
        return minute
