"""`lens demo`'s plan and the demo running: every role wired to the simulated cluster, and the
API showing the GPUs and pods the simulator enacted."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lens.roles.demo import main as demo_main
from lens.sim.scenario.living import LivingCluster
from lens.sim.scenario.replaying import ScaledClock
from tests.roles.demo.running import RunningDemo, config

pytestmark = pytest.mark.slow_timeout


def test_the_plan_runs_every_role_against_the_simulated_cluster(tmp_path: Path) -> None:
    planned = demo_main.plan(config(), preset="small", speed=60, directory=tmp_path)
    names = [role.name for role in planned.roles]
    assert names == ["simulated-cluster", "jobs", "controller", "simulated-agents", "api"]
    wired = planned.config
    assert wired.database.url == f"sqlite:///{tmp_path / 'lens.db'}"
    assert (wired.jobs.grpc_host, wired.jobs.grpc_port, wired.jobs.lease) == ("127.0.0.1", 0, "")
    assert (wired.jobs.watch_cluster, wired.jobs.daily_report_time) == ("on", "")
    assert not wired.controller.leader_election and wired.controller.kubelet_service == ""
    assert planned.notes[0] == (
        "simulated cluster 'small': 2 nodes, 16 GPUs, living at 60 times real time"
    )
    assert str(tmp_path) in planned.notes[1]
    clock = demo_main.clock(60)
    assert isinstance(clock, ScaledClock) and clock.speed == 60


def test_an_unknown_preset_is_refused(tmp_path: Path) -> None:
    assert demo_main.PRESETS == ("small", "medium")
    with pytest.raises(ValueError, match="unknown scenario 'huge'"):
        demo_main.plan(config(), preset="huge", speed=1, directory=tmp_path)


def _held_now(cluster: LivingCluster) -> set[tuple[str, int, str]]:
    now = time.time()
    return {
        (h.node, gpu, f"{h.namespace}/{h.pod_name}")
        for h in cluster.player.truth.holds
        if h.holds_at(now)
        for gpu in h.gpus
    }


def _held_shown(demo: RunningDemo) -> set[tuple[str, int, str]]:
    gpus = demo.answer("/v1/gpus?page_size=1000")
    assert isinstance(gpus, dict)
    return {
        (g["node"], g["gpu_id"], f"{g['holder']['namespace']}/{g['holder']['pod_name']}")
        for g in gpus["data"]
        if g["holder"] is not None
    }


def test_the_api_shows_the_gpus_and_pods_the_simulator_enacted(tmp_path: Path) -> None:
    """Through the real pipeline — container events from each node's agent, the controller's
    pods, the jobs' allocation — the API comes to show exactly which pod holds which GPU of
    which node, and how many GPUs are allocated, as the simulator enacted them."""
    demo = RunningDemo(tmp_path)
    try:
        assert demo.agents.started.wait(30)
        demo.agents.check_started()  # what the demo's /readyz asks
        deadline = time.monotonic() + 45
        shown, truth = _held_shown(demo), _held_now(demo.cluster)
        while (shown != truth or not truth) and time.monotonic() < deadline:
            time.sleep(0.5)
            shown, truth = _held_shown(demo), _held_now(demo.cluster)
        assert shown == truth and len(truth) >= 13  # the small preset's first pods: 13 GPUs
        overview = demo.answer("/v1/clusters/overview")
        assert isinstance(overview, dict)
        assert (overview["totalNodes"], overview["totalGpus"]) == (2, 16)
        while overview["allocatedGpus"] != len(_held_now(demo.cluster)):
            assert time.monotonic() < deadline, overview
            time.sleep(0.5)
            overview = demo.answer("/v1/clusters/overview")
            assert isinstance(overview, dict)
        about = demo.answer("/v1/about")
        assert isinstance(about, dict) and about["simulated"] and about["clock_rate"] == 1
    finally:
        demo.stop()
