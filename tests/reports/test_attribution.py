"""Attribution of a GPU's minute to its holders by the seconds each held it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.reports.attribution import Attribution, attribute
from lens.reports.samples import Holder, Holding

M = 1_800_000_060.0  # a minute's start
END = M + 60


def holder(name: str, namespace: str = "ml") -> Holder:
    return Holder(
        cluster="prod",
        namespace=namespace,
        pod_name=name,
        container="main",
        pod_uid=f"uid-{name}",
        container_id=f"id-{name}",
    )


A, B, C = holder("a"), holder("b"), holder("c")


def held(holding_holder: Holder, since: float, until: float | None = None) -> Holding:
    return Holding(gpu_uuid="GPU-1", holder=holding_holder, since=since, until=until)


def shares(result: Attribution) -> list[tuple[str, float, float]]:
    return [(s.holder.pod_name, s.held_seconds, s.seconds) for s in result.shares]


def test_a_container_holding_the_gpu_for_20_seconds_gets_20_and_the_rest_is_idle() -> None:
    result = attribute([held(A, M + 10, M + 30)], start=M, end=END)
    assert shares(result) == [("a", 20.0, 20.0)]
    assert result.idle_seconds == 40.0


def test_a_holding_still_in_force_counts_to_the_end_of_the_minute() -> None:
    result = attribute([held(A, M + 45)], start=M, end=END)
    assert shares(result) == [("a", 15.0, 15.0)]
    assert result.idle_seconds == 45.0


def test_a_holding_spanning_several_minutes_gives_each_its_own_part() -> None:
    holding = held(A, M - 30, M + 150)
    minutes = [attribute([holding], start=M + k * 60, end=END + k * 60) for k in range(-1, 4)]
    assert [shares(m)[0][2] if m.shares else 0.0 for m in minutes] == [30.0, 60.0, 60.0, 30.0, 0.0]
    assert [m.idle_seconds for m in minutes] == [30.0, 0.0, 0.0, 30.0, 60.0]


def test_two_containers_sharing_the_gpu_split_the_seconds_they_share() -> None:
    # A holds [0, 40), B holds [20, 60): 20 s alone each, 20 s shared.
    result = attribute([held(A, M, M + 40), held(B, M + 20)], start=M, end=END)
    assert shares(result) == [("a", 40.0, 30.0), ("b", 40.0, 30.0)]
    assert result.idle_seconds == 0.0


def test_three_sharing_for_the_whole_minute_get_twenty_seconds_each() -> None:
    result = attribute([held(C, M), held(A, M - 5), held(B, M - 1, END + 5)], start=M, end=END)
    assert shares(result) == [("a", 60.0, 20.0), ("b", 60.0, 20.0), ("c", 60.0, 20.0)]


def test_a_container_listed_twice_counts_once() -> None:
    result = attribute([held(A, M, M + 30), held(A, M + 10, M + 40), held(B, M)], start=M, end=END)
    assert shares(result) == [("a", 40.0, 20.0), ("b", 60.0, 40.0)]


def test_holdings_outside_the_minute_or_empty_are_left_out() -> None:
    outside = [held(A, M - 60, M), held(B, END, END + 60), held(C, M + 30, M + 30)]
    result = attribute(outside, start=M, end=END)
    assert result.shares == ()
    assert result.idle_seconds == 60.0


def test_holders_are_listed_in_a_stable_order() -> None:
    team_b = holder("z", namespace="aaa")
    result = attribute([held(A, M), held(team_b, M)], start=M, end=END)
    assert [s.holder for s in result.shares] == [team_b, A]


@st.composite
def _holdings(draw: st.DrawFn) -> list[Holding]:
    holders = [A, B, C, holder("d")]
    found = []
    for _ in range(draw(st.integers(0, 8))):
        since = draw(st.floats(M - 120, END + 60))
        until = draw(st.one_of(st.none(), st.floats(M - 120, END + 120)))
        found.append(held(draw(st.sampled_from(holders)), since, until))
    return found


@given(_holdings())
def test_shares_and_idle_add_up_to_the_minute_never_more(holdings: list[Holding]) -> None:
    result = attribute(holdings, start=M, end=END)
    total = sum(s.seconds for s in result.shares) + result.idle_seconds
    assert total == pytest.approx(60.0, abs=1e-9)
    assert sum(s.seconds for s in result.shares) <= 60.0 + 1e-9
    for share in result.shares:
        assert 0 < share.seconds <= share.held_seconds + 1e-9 <= 60.0 + 2e-9
    assert len({s.holder for s in result.shares}) == len(result.shares)


@given(_holdings())
def test_each_holder_is_credited_with_exactly_the_time_it_held(holdings: list[Holding]) -> None:
    """Held seconds against a second-by-second count, on holdings cut to whole seconds."""
    whole = [
        held(h.holder, math.floor(h.since), None if h.until is None else math.floor(h.until))
        for h in holdings
    ]
    result = attribute(whole, start=M, end=END)
    for share in result.shares:
        seconds = sum(
            1
            for second in range(int(M), int(END))
            if any(
                h.holder == share.holder
                and h.since <= second
                and (h.until is None or second < h.until)
                for h in whole
            )
        )
        assert share.held_seconds == pytest.approx(seconds)
    idle = sum(
        1
        for second in range(int(M), int(END))
        if not any(h.since <= second and (h.until is None or second < h.until) for h in whole)
    )
    assert result.idle_seconds == pytest.approx(idle)
