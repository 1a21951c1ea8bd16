"""Runs of a workload (#26): restarts seen by a banner, by an iteration going back, by new pods
after the old ones ended; many pods of one run; late and resent lines; serials read back after
a restart of lens jobs."""

from __future__ import annotations

import itertools
import random
from collections.abc import Collection, Mapping

from hypothesis import given
from hypothesis import strategies as st

from lens.telemetry.trainlogs.runs import (
    Assignment,
    PodMark,
    PodSpan,
    RunHistory,
    RunTracker,
    Sighting,
    StoredRun,
)

W = "workload-1"
_prints = itertools.count()


class Store:
    """The history and pod spans a tracker reads, and how often it read them."""

    def __init__(
        self,
        history: RunHistory | None = None,
        spans: Mapping[str, PodSpan] | None = None,
    ) -> None:
        self.history = history or RunHistory()
        self.spans = dict(spans or {})
        self.span_reads: list[set[str]] = []

    def read_history(self, workload: str) -> RunHistory:
        return self.history

    def read_spans(self, pods: Collection[str]) -> dict[str, PodSpan]:
        self.span_reads.append(set(pods))
        return {pod: self.spans[pod] for pod in pods if pod in self.spans}

    def tracker(self) -> RunTracker:
        return RunTracker(history=self.read_history, spans=self.read_spans)


def line(
    at: float,
    iteration: int | None = None,
    *,
    pod: str = "pod-a",
    rank: int | None = None,
    banner: bool = False,
    print_id: int | None = None,
) -> Sighting:
    return Sighting(
        pod_uid=pod,
        at=at,
        rank=rank,
        iteration=iteration,
        banner=banner,
        fingerprint=next(_prints) if print_id is None else print_id,
        nearest_workload_uid="leaf",
    )


def serials(tracker: RunTracker, *sightings: Sighting) -> list[int]:
    return [a.serial for a in tracker.assign([(W, s) for s in sightings])]


def test_the_first_line_begins_run_one_and_iterations_stay_in_it() -> None:
    tracker = Store().tracker()
    assert serials(tracker, line(100, banner=True), line(110, 10), line(120, 20)) == [1, 1, 1]
    (start,) = tracker.unsaved()
    assert (start.workload_uid, start.serial, start.at, start.pod_uid) == (W, 1, 100, "pod-a")
    assert start.nearest_workload_uid == "leaf"
    tracker.saved([start])
    assert tracker.unsaved() == ()


def test_a_banner_after_iterations_begins_a_run() -> None:
    tracker = Store().tracker()
    assert serials(
        tracker,
        line(100, banner=True, rank=0),
        line(100.2, banner=True, rank=1),  # every rank of TorchTitan prints it
        line(110, 10),
        line(110.5, banner=True, rank=3),  # a slow rank's, within the slack
        line(500, 50),
        line(600, banner=True),  # the process started again
        line(600.1, banner=True, rank=1),
        line(610, 10),
    ) == [1, 1, 1, 1, 1, 2, 2, 2]
    assert [(s.serial, s.at) for s in tracker.unsaved()] == [(1, 100), (2, 600)]


def test_an_iteration_going_back_begins_a_run() -> None:
    tracker = Store().tracker()
    assert serials(
        tracker,
        line(100, 1000),
        line(200, 1050),
        line(150, 1020),  # logged before 1050: a late line, not a restart
        line(300, 1010),  # resumed from the checkpoint of 1010
        line(310, 1020),
    ) == [1, 1, 1, 2, 2]


def test_ranks_and_primus_double_lines_are_compared_each_with_itself() -> None:
    tracker = Store().tracker()
    assert serials(
        tracker,
        line(100, 100, rank=7),
        line(100.01, 100, rank=0),  # Primus forwards the last rank's line to rank 0
        line(200, 200, rank=7),
        line(200.5, 100, rank=1),  # rank 1's line of an earlier step, within the slack
        line(200.6, 200, rank=0),
    ) == [1, 1, 1, 1, 1]


def test_a_multi_node_megatron_run_restarted_in_place() -> None:
    """Rank 0's pod prints the banner, the last rank's pod the iterations."""
    tracker = Store().tracker()
    first = [line(100, pod="rank0", banner=True), *(line(100 + i, i, pod="last") for i in (10, 20))]
    assert serials(tracker, *first) == [1, 1, 1]
    again = [line(900, pod="rank0", banner=True), line(950, 10, pod="last")]
    assert serials(tracker, *again) == [2, 2]


def test_new_pods_after_the_old_ended_begin_a_run_without_banner() -> None:
    """DeepSpeed resumed from a checkpoint: its steps go on upwards, in new pods."""
    spans = {
        "old-0": PodSpan(created_at=10, ended_at=500),
        "old-1": PodSpan(created_at=10, ended_at=505),
        "new-0": PodSpan(created_at=520, ended_at=None),
        "new-1": PodSpan(created_at=521, ended_at=None),
        "peer": PodSpan(created_at=10, ended_at=None),
    }
    store = Store(spans=spans)
    tracker = store.tracker()
    assert serials(tracker, line(100, 100, pod="old-0"), line(101, 100, pod="old-1")) == [1, 1]
    assert serials(tracker, line(400, 200, pod="old-0")) == [1]
    assert store.span_reads == [{"old-0", "old-1"}]  # once for the batch, none once all known
    assert serials(tracker, line(600, 300, pod="new-0"), line(601, 300, pod="new-1")) == [2, 2]
    assert serials(tracker, line(602, 300, pod="peer")) == [2]  # created while new-0 runs


def test_a_pod_joining_while_others_run_is_one_more_node() -> None:
    spans = {
        "a": PodSpan(created_at=10, ended_at=None),
        "b": PodSpan(created_at=300, ended_at=None),
    }
    tracker = Store(spans=spans).tracker()
    assert serials(tracker, line(100, 1, pod="a"), line(400, 1, pod="b")) == [1, 1]


def test_unknown_pods_never_begin_a_run_by_themselves() -> None:
    tracker = Store().tracker()
    assert serials(tracker, line(100, 5, pod="a"), line(9000, 6, pod="b")) == [1, 1]


def test_a_late_line_of_an_earlier_run_stays_in_it() -> None:
    tracker = Store().tracker()
    serials(tracker, line(100, 10), line(200, 20), line(300, banner=True), line(310, 5))
    assert serials(tracker, line(250, 25)) == [1]
    assert serials(tracker, line(50, 1)) == [1]  # before any run: the first


def test_a_resent_line_gets_its_first_answer_and_changes_nothing() -> None:
    tracker = Store().tracker()
    banner = line(300, banner=True, print_id=-1)
    assert serials(tracker, line(100, 10), line(200, 20), banner) == [1, 1, 2]
    assert serials(tracker, line(310, 5), banner, banner) == [2, 2, 2]
    assert [s.serial for s in tracker.unsaved()] == [1, 2]


def test_hugging_face_lines_are_numbered_in_order_per_run() -> None:
    tracker = Store().tracker()
    first, second = line(110, print_id=-10), line(120, print_id=-11)
    found = tracker.assign([(W, line(100, banner=True)), (W, first), (W, second), (W, first)])
    assert found == [
        Assignment(serial=1, iteration=None),
        Assignment(serial=1, iteration=1),
        Assignment(serial=1, iteration=2),
        Assignment(serial=1, iteration=1),
    ]
    found = tracker.assign([(W, line(500, banner=True)), (W, line(510))])
    assert found[1] == Assignment(serial=2, iteration=1)


def test_workloads_keep_their_own_runs() -> None:
    tracker = Store().tracker()
    found = tracker.assign(
        [("parent", line(100, 10)), ("child", line(100, 10)), ("child", line(200, banner=True))]
    )
    assert [a.serial for a in found] == [1, 1, 2]


def test_serials_are_read_back_after_a_restart() -> None:
    history = RunHistory(
        runs=(
            StoredRun(serial=1, start=100.0, last_iteration=1050, first_iteration_at=110.0),
            StoredRun(
                serial=2,
                start=1000.0,
                last_iteration=1060,
                first_iteration_at=1010.0,
                pods={"pod-a": PodMark(iteration=1060, at=1100.0)},
                start_pod="rank0",
            ),
        )
    )
    tracker = Store(history=history).tracker()
    assert serials(tracker, line(1000, pod="rank0", banner=True)) == [2]  # resent banner
    assert serials(tracker, line(1090, 1050)) == [2]  # resent line
    assert serials(tracker, line(500, 500)) == [1]
    assert serials(tracker, line(1110, 1070)) == [2]
    assert tracker.unsaved() == ()
    assert serials(tracker, line(1300, 1010)) == [3]  # went back: a restart
    assert [(s.serial, s.at) for s in tracker.unsaved()] == [(3, 1300)]


def test_hugging_face_numbers_go_on_after_a_restart() -> None:
    history = RunHistory(runs=(StoredRun(serial=4, start=100.0, last_iteration=7),))
    found = Store(history=history).tracker().assign([(W, line(200))])
    assert found == [Assignment(serial=4, iteration=8)]


_RUNNING = PodSpan(created_at=-100.0, ended_at=None)


def _run_lines(
    pods: int, ranks: int, steps: int, jitter: list[float], *, start: float, first: int
) -> list[Sighting]:
    """A run of `pods` pods of `ranks` ranks each: every rank prints the banner within a second
    of `start`, then iterations first, first+10, ... every 10 s, each rank a little apart."""
    lines = []
    for pod in range(pods):
        for rank in range(ranks):
            skew = jitter[(pod * ranks + rank) % len(jitter)]
            lines.append(line(start + abs(skew), pod=f"p{pod}", rank=rank, banner=True))
            lines.extend(
                line(start + 10 * (j + 1) + skew, first + 10 * j, pod=f"p{pod}", rank=rank)
                for j in range(steps)
            )
    return lines


@given(
    pods=st.integers(1, 3),
    ranks=st.integers(1, 2),
    steps=st.integers(1, 6),
    jitter=st.lists(st.floats(-0.4, 0.4), min_size=1, max_size=6),
    order=st.randoms(use_true_random=False),
    cuts=st.lists(st.integers(1, 8), min_size=1, max_size=10),
)
def test_one_run_of_many_pods_in_any_order_stays_one_run(
    pods: int, ranks: int, steps: int, jitter: list[float], order: random.Random, cuts: list[int]
) -> None:
    lines = _run_lines(pods, ranks, steps, jitter, start=0.0, first=100)
    lines += order.sample(lines, len(lines) // 3)  # some sent again
    order.shuffle(lines)
    store = Store(spans={f"p{pod}": _RUNNING for pod in range(pods)})
    tracker = store.tracker()
    found = [serial for batch in _batches(lines, cuts) for serial in serials(tracker, *batch)]
    assert set(found) == {1}
    assert [start.serial for start in tracker.unsaved()] == [1]


@given(
    pods=st.integers(1, 3),
    ranks=st.integers(1, 2),
    jitter=st.lists(st.floats(-0.4, 0.4), min_size=1, max_size=6),
    resumed=st.sampled_from([120, 10, 200]),  # from a checkpoint, from scratch, further on
    order=st.randoms(use_true_random=False),
    cuts=st.lists(st.integers(1, 8), min_size=1, max_size=10),
)
def test_a_restart_seen_in_any_interleaving_of_the_pods(
    pods: int,
    ranks: int,
    jitter: list[float],
    resumed: int,
    order: random.Random,
    cuts: list[int],
) -> None:
    """Each pod's collector sends its lines in order; pods interleave in any way; a batch is
    taken in log-time order. Every iteration line lands in its own run."""
    first = _run_lines(pods, ranks, 4, jitter, start=0.0, first=100)
    second = _run_lines(pods, ranks, 4, jitter, start=500.0, first=resumed)
    by_pod: dict[str, list[Sighting]] = {}
    for sighting in sorted(first + second, key=lambda s: s.at):
        by_pod.setdefault(sighting.pod_uid, []).append(sighting)
    arrival = []
    while by_pod:
        pod = order.choice(sorted(by_pod))
        arrival.append(by_pod[pod].pop(0))
        if not by_pod[pod]:
            del by_pod[pod]
    expected = {id(s): 1 for s in first} | {id(s): 2 for s in second}
    tracker = Store(spans={f"p{pod}": _RUNNING for pod in range(pods)}).tracker()
    for batch in _batches(arrival, cuts):
        ordered = sorted(batch, key=lambda s: s.at)  # as batching.prepare takes them
        for sighting, serial in zip(ordered, serials(tracker, *ordered), strict=True):
            if not sighting.banner:
                assert serial == expected[id(sighting)], sighting


def _batches(lines: list[Sighting], cuts: list[int]) -> list[list[Sighting]]:
    batches, position, index = [], 0, 0
    while position < len(lines):
        size = cuts[index % len(cuts)]
        batches.append(lines[position : position + size])
        position += size
        index += 1
    return batches
