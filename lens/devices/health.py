"""GPU health, judged from each reading by the rules of healthrules.py: `HealthTracker.assess`
returns the readings with their GpuHealth set.

What a rule looks at changes between readings (an error count rising, a residency counter
growing), so the tracker remembers each GPU's last reading, by UUID. A condition true now starts
a reason once it has held for the rule's `lasts_seconds`; the reason then stays active until
`clears_seconds` after the condition was last true.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Sequence

from lens.devices import healthrules
from lens.devices.gpu import GpuHealth, GpuSnapshot, ThrottleReading

_RULES = {rule.reason: rule for rule in healthrules.RULES}
_HEALTHY = GpuHealth(state="healthy")
_PAGE_REASONS = {"pending": "vram_pages_pending", "unretirable": "vram_pages_unretirable"}


@dataclasses.dataclass(slots=True)
class _Seen:
    """What the rules need of a GPU's past."""

    uncorrectable: int | None = None
    retired: int | None = None
    residency: dict[str, int] = dataclasses.field(default_factory=dict)
    accumulations: int | None = None
    # (time, correctable count) whenever the count changed; one entry older than the window
    # kept as the baseline.
    correctable: collections.deque[tuple[float, int]] = dataclasses.field(
        default_factory=collections.deque
    )
    began: dict[str, float] = dataclasses.field(default_factory=dict)  # condition true since
    active_until: dict[str, float] = dataclasses.field(default_factory=dict)


def _counts(gpu: GpuSnapshot) -> tuple[int | None, int | None]:
    """The uncorrectable and correctable counts over every block (None: none reported)."""
    uncorrectable = correctable = None
    for _block, kind, count in gpu.ecc_errors:
        if kind == "uncorrectable":
            uncorrectable = (uncorrectable or 0) + count
        elif kind == "correctable":
            correctable = (correctable or 0) + count
    return uncorrectable, correctable


class HealthTracker:
    """Judges GPU readings in the order they were taken (one collector's thread)."""

    def __init__(self, *, correctable_errors_per_hour: float) -> None:
        self._correctable_limit = correctable_errors_per_hour
        self._seen: dict[str, _Seen] = {}

    def assess(self, gpus: Sequence[GpuSnapshot], now: float) -> tuple[GpuSnapshot, ...]:
        """`gpus` with their health at `now`; GPUs not among them are forgotten."""
        keys = [gpu.uuid or gpu.pci_bus_id for gpu in gpus]
        self._seen = {key: self._seen.get(key) or _Seen() for key in keys}
        return tuple(
            gpu.with_health(self._judge(gpu, self._seen[key], now))
            for gpu, key in zip(gpus, keys, strict=True)
        )

    def _judge(self, gpu: GpuSnapshot, seen: _Seen, now: float) -> GpuHealth:
        throttled = _throttled(gpu.throttle, seen)
        true = self._conditions(gpu, seen, now)
        true |= {healthrules.THROTTLE_REASONS[name] for name in throttled}
        if not true and not seen.began and not seen.active_until:
            return _HEALTHY  # the common case, judged without the rules' loop
        for reason, rule in _RULES.items():
            if reason not in true:
                seen.began.pop(reason, None)
                continue
            began = seen.began.setdefault(reason, now)
            if now - began >= rule.lasts_seconds:
                seen.active_until[reason] = now + rule.clears_seconds
        for reason in [r for r, until in seen.active_until.items() if until < now]:
            del seen.active_until[reason]
        active = tuple(r for r in _RULES if r in seen.active_until)
        state = healthrules.worst([_RULES[r].state for r in active])
        return GpuHealth(state=state, reasons=active, throttled=throttled)

    def _conditions(self, gpu: GpuSnapshot, seen: _Seen, now: float) -> set[str]:
        true: set[str] = set()
        uncorrectable, correctable = _counts(gpu)
        if uncorrectable is not None:
            if uncorrectable > (seen.uncorrectable or 0):
                true.add("ecc_uncorrectable")
            seen.uncorrectable = uncorrectable
        if correctable is not None and self._correctable_rose(seen, correctable, now):
            true.add("ecc_correctable_rate")
        for status, count in gpu.vram_bad_pages:
            if status == "retired":
                if seen.retired is not None and count > seen.retired:
                    true.add("vram_pages_retired")
                seen.retired = count
            elif count > 0:
                true.add(_PAGE_REASONS[status])
        return true

    def _correctable_rose(self, seen: _Seen, count: int, now: float) -> bool:
        """More correctable errors within the window than the limit allows."""
        history = seen.correctable
        if not history or history[-1][1] != count:
            history.append((now, count))
        window_start = now - healthrules.CORRECTABLE_WINDOW_SECONDS
        while len(history) > 1 and history[1][0] <= window_start:
            history.popleft()
        baseline = history[0][1]
        return count - baseline > self._correctable_limit


def _throttled(reading: ThrottleReading | None, seen: _Seen) -> tuple[str, ...]:
    """The throttlers active over the interval since the last reading."""
    if reading is None:
        return ()
    if reading.active is not None:
        return tuple(sorted(reading.active))
    found: list[str] = []
    before, periods = seen.residency, None
    if reading.accumulations is not None and seen.accumulations is not None:
        periods = reading.accumulations - seen.accumulations
    for name, count in reading.residency:
        grew = count - before.get(name, count)
        if periods and periods > 0 and grew >= healthrules.THROTTLE_SHARE * periods:
            found.append(name)
    seen.residency = dict(reading.residency)
    seen.accumulations = reading.accumulations
    return tuple(sorted(found))
