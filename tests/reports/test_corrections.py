"""Minutes kept after they are sent, corrected when a holder of theirs is learnt late: shares
re-split among all holders, each holder added once, and nothing corrected past the look-back
(its seconds reported lost instead)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from lens.reports import attribution
from lens.reports.corrections import LOOK_BACK_MINUTES, MinuteCorrector, overlap, with_holdings
from lens.reports.gpuminutes import GpuMinute
from lens.reports.samples import Holder, Holding

M = 1_800_000_000  # a minute's start
GPU = "GPU-1"


def holder(name: str) -> Holder:
    return Holder(
        cluster="",
        namespace="ml",
        pod_name=name,
        container="main",
        pod_uid=f"uid-{name}",
        container_id=f"id-{name}",
    )


A, B, C = holder("a"), holder("b"), holder("c")


def held(who: Holder, since: float, until: float | None = None, gpu: str = GPU) -> Holding:
    return Holding(gpu_uuid=gpu, holder=who, since=since, until=until)


def minute(start: int, holdings: Iterable[Holding] = (), uuid: str = GPU) -> GpuMinute:
    """A GPU-minute as the summariser closes it, attributed from `holdings`."""
    return GpuMinute(
        start=start,
        uuid=uuid,
        index=1,
        pci_bus_id="0000:05:00.0",
        samples=60,
        expected_samples=60,
        utilization_mean_ratio=0.5,
        held_by=attribution.attribute(holdings, start=start, end=start + 60),
    )


class Node:
    """A corrector fed as the agent feeds it: minutes closed, then each cycle's holdings."""

    def __init__(self, **settings: int) -> None:
        self.corrector = MinuteCorrector(**settings)
        self.holdings: dict[str, list[Holding]] = {}

    def close(self, start: int, uuid: str = GPU) -> GpuMinute:
        sent = minute(start, self.holdings.get(uuid, ()), uuid)
        self.corrector.closed(sent, self.holdings.get(uuid, ()))
        return sent

    def learn(self, now: float) -> tuple[list[GpuMinute], list[tuple[str, float]]]:
        learnt = self.corrector.learn(lambda uuid: self.holdings.get(uuid, ()), now=now)
        lost = [(item.holding.holder.pod_name, item.seconds) for item in learnt.lost]
        return list(learnt.corrected), lost


def shares(sent: GpuMinute) -> list[tuple[str, float, float]]:
    return [(s.holder.pod_name, s.held_seconds, s.seconds) for s in sent.held_by.shares]


def test_a_holder_learnt_a_minute_late_gets_its_seconds_in_the_minutes_sent_without_it() -> None:
    node = Node()
    first, second = node.close(M), node.close(M + 60)
    assert first.held_by.shares == () and second.held_by.shares == ()
    node.holdings[GPU] = [held(A, M + 40)]  # running since +40, learnt at +121
    corrected, lost = node.learn(M + 121)
    assert [(m.start, shares(m), m.held_by.idle_seconds) for m in corrected] == [
        (M, [("a", 20.0, 20.0)], 40.0),
        (M + 60, [("a", 60.0, 60.0)], 0.0),
    ]
    assert lost == []
    # The minute's own figures are kept: a correction is the minute sent again, whole.
    assert corrected[0].utilization_mean_ratio == first.utilization_mean_ratio
    assert corrected[0].samples == first.samples


def test_a_late_holder_shares_a_minute_with_the_holders_it_had() -> None:
    node = Node()
    node.holdings[GPU] = [held(A, M - 600)]
    node.close(M)
    node.learn(M + 61)
    node.holdings[GPU].append(held(B, M + 30, M + 50))
    (corrected,), _ = node.learn(M + 90)
    # [30, 50) shared: 10 s each; A alone the other 40 s.
    assert shares(corrected) == [("a", 60.0, 50.0), ("b", 20.0, 10.0)]
    assert corrected.held_by.idle_seconds == 0.0
    total = sum(s.seconds for s in corrected.held_by.shares) + corrected.held_by.idle_seconds
    assert total == pytest.approx(60.0)


def test_each_late_holder_is_added_once_and_a_second_one_re_splits_among_all() -> None:
    node = Node()
    node.close(M)
    node.holdings[GPU] = [held(A, M + 10)]
    (once,), _ = node.learn(M + 61)
    assert node.learn(M + 62) == ([], [])  # known now: nothing more to send
    assert node.learn(M + 63) == ([], [])
    node.holdings[GPU].append(held(C, M))
    (twice,), _ = node.learn(M + 64)
    assert shares(once) == [("a", 50.0, 50.0)]
    assert shares(twice) == [("a", 50.0, 25.0), ("c", 60.0, 35.0)]
    assert twice.held_by.idle_seconds == 0.0


def test_a_minute_that_already_names_the_holder_is_not_sent_again() -> None:
    node = Node()
    node.holdings[GPU] = [held(A, M + 30)]
    node.close(M)
    assert node.learn(M + 61) == ([], [])  # new to the corrector, not to the minute


def test_a_holder_that_did_not_overlap_a_minute_leaves_it_alone() -> None:
    node = Node()
    node.close(M)
    node.close(M + 60)
    node.holdings[GPU] = [held(A, M + 70, M + 100), held(B, M - 300, M)]
    corrected, lost = node.learn(M + 121)
    assert [(m.start, shares(m)) for m in corrected] == [(M + 60, [("a", 30.0, 30.0)])]
    assert lost == []


def test_other_gpus_minutes_are_not_touched() -> None:
    node = Node()
    node.close(M, uuid="GPU-0")
    node.close(M)
    node.holdings["GPU-0"] = [held(A, M, gpu="GPU-0")]
    corrected, _ = node.learn(M + 61)
    assert [(m.uuid, shares(m)) for m in corrected] == [("GPU-0", [("a", 60.0, 60.0)])]


def test_minutes_past_the_look_back_are_forgotten_and_a_late_holders_seconds_in_them_lost() -> None:
    node = Node(look_back_minutes=2)
    for k in range(4):
        node.close(M + 60 * k)
    # At +250 minutes 0 and 1 ended more than 2 minutes ago; 2 and 3 are kept.
    node.holdings[GPU] = [held(A, M + 30)]
    corrected, lost = node.learn(M + 250)
    assert [(m.start, shares(m)[0][2]) for m in corrected] == [(M + 120, 60.0), (M + 180, 60.0)]
    assert lost == [("a", 90.0)]  # 30 s of minute 0, 60 of minute 1


def test_time_before_the_first_minute_sent_is_not_counted_lost() -> None:
    node = Node(look_back_minutes=1)
    node.close(M)
    node.holdings[GPU] = [held(A, M - 3600, M + 30)]  # held before the agent started
    corrected, lost = node.learn(M + 200)
    assert corrected == [] and lost == [("a", 30.0)]


def test_the_default_look_back_outlasts_a_failed_lookup_and_a_reconciliation() -> None:
    """A lookup failing 70 s, then the next reconciliation (60 s by default): learnt at most
    130 s after the container started, well within the look-back."""
    assert LOOK_BACK_MINUTES * 60 > 70 + 60 + 60
    with pytest.raises(ValueError, match="at least 1"):
        MinuteCorrector(look_back_minutes=0)


def test_with_holdings_re_splits_and_overlap_clips() -> None:
    sent = minute(M, [held(A, M)])
    again = with_holdings(sent, [held(A, M), held(B, M + 30)])
    assert shares(again) == [("a", 60.0, 45.0), ("b", 30.0, 15.0)]
    assert again.held_by.idle_seconds == 0.0
    assert overlap(held(A, M + 10, M + 20), M, M + 60) == 10.0
    assert overlap(held(A, M + 70), M, M + 60) == 0.0
    assert overlap(held(A, M - 10), M, M + 60) == 60.0
