"""GPU-minutes kept after they are sent, so that a holder the node agent learns of late still
gets its time: the minute is sent again, re-attributed among all its holders (a correction).

The node agent (roles/node_agent/reporting.py) hands each GPU-minute it sends to `closed`, with
the holdings it was attributed from, and after every cycle its GPUs' holdings to `learn`. The
rules, and what happens to a holder learnt after the look-back, are in docs/reports.md.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable

from lens.reports import attribution
from lens.reports.gpuminutes import GpuMinute
from lens.reports.samples import Holder, Holding
from lens.reports.timeline import MINUTE

# How long after its end a GPU-minute can still take a holder learnt late. A container whose
# devices only the kubelet's pod-resources names is found again at the next reconciliation
# (every 60 s by default) once the kubelet answers: 15 minutes cover that after a kubelet
# restart of several minutes, and cost 15 minutes of each GPU (about 8 KB a GPU).
LOOK_BACK_MINUTES = 15


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Lost:
    """The seconds a holding learnt late held its GPU in minutes sent and no longer kept: those
    minutes keep the seconds as idle."""

    holding: Holding
    seconds: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Learnt:
    corrected: tuple[GpuMinute, ...] = ()  # each minute whole, to be sent again
    lost: tuple[Lost, ...] = ()


@dataclasses.dataclass(slots=True)
class _Kept:
    minute: GpuMinute  # as last sent
    holdings: list[Holding]  # those it was attributed from, overlapping it
    holders: set[Holder]  # the holders it names


class _Gpu:
    __slots__ = ("first", "forgotten", "kept", "seen")

    def __init__(self, start: int) -> None:
        self.first = start  # the start of the first minute sent
        self.forgotten = start  # minutes sent before this are no longer kept
        self.kept: dict[int, _Kept] = {}  # by start
        self.seen: frozenset[Holder] = frozenset()  # the holders at the last `learn`


class MinuteCorrector:
    """One node's GPUs; not thread-safe (the agent's cycle calls it)."""

    def __init__(self, *, look_back_minutes: int = LOOK_BACK_MINUTES) -> None:
        if look_back_minutes < 1:
            raise ValueError("look_back_minutes must be at least 1")
        self.look_back_seconds = look_back_minutes * MINUTE
        self._gpus: dict[str, _Gpu] = {}

    def closed(self, minute: GpuMinute, holdings: Iterable[Holding]) -> None:
        """Keep `minute`, just sent, with the holdings it was attributed from."""
        gpu = self._gpus.get(minute.uuid)
        if gpu is None:
            gpu = self._gpus[minute.uuid] = _Gpu(minute.start)
        start = minute.start
        gpu.first = min(gpu.first, start)
        gpu.kept[start] = _Kept(
            minute=minute,
            holdings=[h for h in holdings if overlap(h, start, start + MINUTE) > 0],
            holders={share.holder for share in minute.held_by.shares},
        )

    def learn(self, holdings: Callable[[str], Iterable[Holding]], *, now: float) -> Learnt:
        """The minutes kept that a holder in `holdings` (a GPU's uuid -> its holdings now)
        overlaps without being among their holders, each re-attributed whole; and the seconds
        such holders held in minutes no longer kept. A holder counts once: once corrected, a
        minute names it, and a minute never loses a holder."""
        corrected: list[GpuMinute] = []
        lost: list[Lost] = []
        for uuid, gpu in self._gpus.items():
            self._expire(gpu, now)
            current = tuple(holdings(uuid))
            holders = frozenset(h.holder for h in current)
            new = holders - gpu.seen
            gpu.seen = holders
            if not new:
                continue  # the usual cycle: nothing learnt since the last
            late = [h for h in current if h.holder in new]
            for kept in gpu.kept.values():
                if _correct(kept, late):
                    corrected.append(kept.minute)
            lost.extend(
                Lost(holding=h, seconds=seconds)
                for h in late
                if (seconds := overlap(h, gpu.first, gpu.forgotten)) > 0
            )
        return Learnt(corrected=tuple(corrected), lost=tuple(lost))

    def _expire(self, gpu: _Gpu, now: float) -> None:
        horizon = now - self.look_back_seconds
        kept = gpu.kept
        # Oldest first, as minutes close in order; one closed again after the clock stepped
        # back waits behind newer ones, still bounded by the look-back.
        while kept and (start := next(iter(kept))) + MINUTE <= horizon:
            del kept[start]
            gpu.forgotten = max(gpu.forgotten, start + MINUTE)


def _correct(kept: _Kept, late: Iterable[Holding]) -> bool:
    """Add to `kept` the holdings of holders it lacks that overlap it; whether any did."""
    start = kept.minute.start
    joining = [
        h for h in late if h.holder not in kept.holders and overlap(h, start, start + MINUTE) > 0
    ]
    if not joining:
        return False
    kept.holdings.extend(joining)
    kept.holders.update(h.holder for h in joining)
    kept.minute = with_holdings(kept.minute, kept.holdings)
    return True


def with_holdings(minute: GpuMinute, holdings: Iterable[Holding]) -> GpuMinute:
    """`minute` attributed afresh from `holdings`: shares re-split, idle seconds what is left."""
    start = minute.start
    held_by = attribution.attribute(holdings, start=start, end=start + MINUTE)
    return dataclasses.replace(minute, held_by=held_by)


def overlap(holding: Holding, start: float, end: float) -> float:
    """Seconds of [start, end) within the holding."""
    until = math.inf if holding.until is None else holding.until
    return max(0.0, min(until, end) - max(holding.since, start))
