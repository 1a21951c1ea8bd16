"""Lines routed to their pods' workloads; lines of pods not known yet wait, are retried, and are
dropped (counted) after the wait or when too many wait."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

import pytest

from lens.runtime import errors
from lens.telemetry.trainlogs.storing import PodChain
from lens.telemetry.trainlogs.waiting import PodWorkloads

CHAIN = PodChain(workload_uids=("job", "top"), nearest="job")


@dataclasses.dataclass(frozen=True)
class Line:
    pod_uid: str
    text: str = ""


class References:
    def __init__(self) -> None:
        self.chains: dict[str, PodChain] = {}
        self.reads: list[set[str]] = []
        self.down = False

    def __call__(self, pods: Collection[str]) -> dict[str, PodChain]:
        if self.down:
            raise errors.StoreError("read failed: server closed the connection")
        self.reads.append(set(pods))
        return {pod: self.chains[pod] for pod in pods if pod in self.chains}


def workloads(refs: References, **options: float) -> PodWorkloads[Line]:
    settings = {"wait_seconds": 30.0, "retry_seconds": 1.0, "max_waiting": 3, **options}
    return PodWorkloads(
        refs,
        wait_seconds=settings["wait_seconds"],
        retry_seconds=settings["retry_seconds"],
        max_waiting=int(settings["max_waiting"]),
        refresh_seconds=settings.get("refresh_seconds", 300.0),
    )


def test_lines_of_known_pods_go_at_once_and_pods_are_read_once() -> None:
    refs = References()
    refs.chains["a"] = CHAIN
    routing = workloads(refs)
    first = routing.route([Line("a", "1"), Line("a", "2")], now=0.0)
    assert first.ready == [(Line("a", "1"), CHAIN), (Line("a", "2"), CHAIN)]
    assert routing.route([Line("a", "3")], now=5.0).ready == [(Line("a", "3"), CHAIN)]
    assert refs.reads == [{"a"}]


def test_lines_of_an_unknown_pod_wait_until_its_workload_is_stored() -> None:
    refs = References()
    routing = workloads(refs)
    assert routing.route([Line("b", "1")], now=0.0).ready == []
    assert routing.route([Line("b", "2")], now=0.5).ready == []  # not read again yet
    assert routing.waiting == 2 and refs.reads == [{"b"}]
    refs.chains["b"] = CHAIN
    assert routing.route([], now=0.9).ready == []
    released = routing.route([], now=1.0).ready
    assert released == [(Line("b", "1"), CHAIN), (Line("b", "2"), CHAIN)]
    assert routing.waiting == 0


def test_lines_waiting_too_long_or_too_many_are_dropped_and_counted() -> None:
    routing = workloads(References())
    routed = routing.route([Line("c", str(i)) for i in range(5)], now=0.0)
    assert routed.dropped == {"waiting_full": 2} and routing.waiting == 3
    assert routing.route([], now=29.0).dropped == {}
    assert routing.route([], now=30.0).dropped == {"unknown_workload": 3}
    assert routing.waiting == 0
    routing.route([Line("d")], now=31.0)
    assert routing.drop_waiting() == 1 and routing.waiting == 0


def test_a_failing_store_changes_nothing() -> None:
    refs = References()
    refs.chains["a"] = CHAIN
    routing = workloads(refs)
    refs.down = True
    with pytest.raises(errors.StoreError):
        routing.route([Line("a")], now=0.0)
    refs.down = False
    assert routing.route([Line("a")], now=0.1).ready == [(Line("a"), CHAIN)]


def test_a_pods_workloads_are_read_again_after_a_while() -> None:
    refs = References()
    refs.chains["a"] = PodChain(workload_uids=("job",), nearest="job")
    routing = workloads(refs, refresh_seconds=60.0)
    routing.route([Line("a")], now=0.0)
    refs.chains["a"] = CHAIN  # its parent was stored since
    assert routing.route([Line("a")], now=59.0).ready[0][1].workload_uids == ("job",)
    assert routing.route([Line("a")], now=60.0).ready[0][1] == CHAIN
    del refs.chains["a"]  # not found any more: the chain known is kept
    assert routing.route([Line("a")], now=121.0).ready[0][1] == CHAIN
