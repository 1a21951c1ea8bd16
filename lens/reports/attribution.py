"""Who held a GPU during a minute, by the seconds each held it.

gpuminutes.py attributes every GPU-minute it closes with `attribute`, from the holdings the node
agent's container tracking knows (samples.py Holding). The rule (docs/reports.md): each holder
is given the seconds it held the GPU within the minute; seconds two or more held at once are
split equally among them, so that the shares and the idle seconds add up to the minute exactly
and GPU-hours summed per team never exceed the GPU's wall time.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable

from lens.reports.samples import Holder, Holding

Interval = tuple[float, float]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Share:
    """One holder's part of a minute."""

    holder: Holder
    held_seconds: float  # how long it held the GPU within the minute, alone or not
    seconds: float  # its share: held seconds, those it shared split equally with the others


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Attribution:
    """A stretch of one GPU's time divided among its holders; idle: held by none."""

    shares: tuple[Share, ...]
    idle_seconds: float


def attribute(holdings: Iterable[Holding], *, start: float, end: float) -> Attribution:
    """Divide [start, end) among the holders of one GPU's `holdings` (other GPUs' are the
    caller's to leave out). A holding counts over [since, until); the same holder listed twice
    counts once."""
    held = _held_intervals(holdings, start=start, end=end)
    points = sorted({start, end, *(p for spans in held.values() for span in spans for p in span)})
    seconds = dict.fromkeys(held, 0.0)
    idle = 0.0
    for left, right in itertools.pairwise(points):
        holders = [h for h, spans in held.items() if _covers(spans, left, right)]
        if holders:
            each = (right - left) / len(holders)
            for holder in holders:
                seconds[holder] += each
        else:
            idle += right - left
    shares = tuple(
        Share(holder=holder, held_seconds=_length(held[holder]), seconds=seconds[holder])
        for holder in sorted(held)
    )
    return Attribution(shares=shares, idle_seconds=idle)


def _held_intervals(
    holdings: Iterable[Holding], *, start: float, end: float
) -> dict[Holder, list[Interval]]:
    """Each holder's holdings clipped to [start, end) and merged where they overlap."""
    clipped: dict[Holder, list[Interval]] = {}
    for holding in holdings:
        since = max(holding.since, start)
        until = end if holding.until is None else min(holding.until, end)
        if since < until:
            clipped.setdefault(holding.holder, []).append((since, until))
    return {holder: _merged(spans) for holder, spans in clipped.items()}


def _merged(spans: list[Interval]) -> list[Interval]:
    merged: list[Interval] = []
    for since, until in sorted(spans):
        if merged and since <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], until))
        else:
            merged.append((since, until))
    return merged


def _covers(spans: list[Interval], left: float, right: float) -> bool:
    # Every span's ends are among the sweep's points, so a segment lies wholly in or out.
    return any(since <= left and right <= until for since, until in spans)


def _length(spans: list[Interval]) -> float:
    return sum(until - since for since, until in spans)
