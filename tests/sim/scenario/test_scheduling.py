from __future__ import annotations

from lens.sim.scenario.scheduling import Scheduler


def test_best_fit_keeps_whole_nodes_for_big_pods() -> None:
    scheduler = Scheduler({"a": 8, "b": 8})
    assert scheduler.place("small", 1) == "a"
    assert scheduler.place("big", 8) == "b"
    assert scheduler.place("another", 2) == "a"
    assert scheduler.place("too-big", 8) is None
    scheduler.release("big")
    assert scheduler.free("b") == 8
    scheduler.node_down("b")
    assert scheduler.place("after-loss", 8) is None
    assert sorted(scheduler.pods_on("a")) == ["another", "small"]


def test_a_pod_gets_the_lowest_free_gpus_and_gives_them_back() -> None:
    scheduler = Scheduler({"a": 8})
    assert scheduler.place("two", 2) == "a" and scheduler.gpus_of("two") == (0, 1)
    assert scheduler.place("three", 3) == "a" and scheduler.gpus_of("three") == (2, 3, 4)
    scheduler.release("two")
    assert scheduler.gpus_of("two") == () and scheduler.free("a") == 5
    assert scheduler.place("one", 1) == "a" and scheduler.gpus_of("one") == (0,)
    assert scheduler.place("four", 4) == "a" and scheduler.gpus_of("four") == (1, 5, 6, 7)
    assert scheduler.free("a") == 0
