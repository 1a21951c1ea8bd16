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
