"""`lens demo`'s plan and the demo running: every role wired to the simulated cluster, and the
API showing the GPUs and pods the simulator enacted."""

from __future__ import annotations

import dataclasses
import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from lens.roles.demo import main as demo_main
from lens.runtime import config as lens_config
from lens.runtime import launcher, settings
from lens.sim.scenario import spec
from lens.sim.scenario.living import LivingCluster
from lens.sim.scenario.replaying import ScaledClock
from tests.roles.demo.running import RunningDemo, config

pytestmark = pytest.mark.slow_timeout


def test_the_plan_runs_every_role_against_the_simulated_cluster(tmp_path: Path) -> None:
    planned = demo_main.plan(config(), preset="small", speed=60, directory=tmp_path)
    names = [role.name for role in planned.roles]
    assert names == [
        "simulated-cluster",
        "jobs",
        "controller",
        "simulated-agents",
        "simulated-log-collector",
        "api",
    ]
    wired = planned.config
    assert wired.database.url == f"sqlite:///{tmp_path / 'lens.db'}"
    # A writer waits for SQLite's lock as long as it must (a loaded host slows the cluster's
    # clock, it loses no write); the process's own metrics and readiness are spaced out.
    assert wired.database.busy_timeout_seconds == 600
    assert wired.service.metrics_interval_seconds == 5 * 10
    assert wired.service.readiness_interval_seconds == 5 * 10
    assert (wired.jobs.grpc_host, wired.jobs.grpc_port, wired.jobs.lease) == ("127.0.0.1", 0, "")
    assert (wired.jobs.watch_cluster, wired.jobs.daily_report_time) == ("on", "")
    assert not wired.controller.leader_election and wired.controller.kubelet_service == ""
    assert planned.notes[0] == (
        "simulated cluster 'small': 2 nodes, 16 GPUs, living at 60 times real time"
    )
    assert str(tmp_path) in planned.notes[1]
    clock = demo_main.clock(60)
    assert isinstance(clock, ScaledClock) and clock.speed == 60


def test_a_speed_over_what_the_preset_sustains_is_warned_of(tmp_path: Path) -> None:
    assert set(demo_main.SUSTAINED_SPEEDS) == set(demo_main.PRESETS)
    for preset, highest in demo_main.SUSTAINED_SPEEDS.items():
        held = demo_main.plan(config(), preset=preset, speed=highest, directory=tmp_path)
        assert len(held.notes) == 2 and not any("warning" in n for n in held.notes), preset
    medium = demo_main.SUSTAINED_SPEEDS["medium"]
    over = demo_main.plan(config(), preset="medium", speed=60, directory=tmp_path)
    assert over.notes[2] == (
        f"warning: --speed 60 is over the {medium:g} the medium preset sustains on 2 cores: "
        "its clock slows to what this host keeps up with (the dashboard's header says how "
        "fast it lives)"
    )


def test_the_demo_s_nodes_have_no_rdma_ports_and_are_otherwise_the_preset_s() -> None:
    medium = spec.preset("medium")
    demoed = demo_main.without_rdma(medium)
    assert [group.rdma for group in demoed.nodes] == [0]
    assert dataclasses.replace(demoed, nodes=medium.nodes) == medium


def test_the_plan_names_no_kubeconfig_of_the_user(tmp_path: Path) -> None:
    # The demo logged the user's ~/.kube/config (or $KUBECONFIG) that it never reads (#36).
    kubeconfig = tmp_path / "users-kubeconfig"
    loaded = lens_config.load(
        environ={
            "HOME": str(tmp_path),
            "KUBECONFIG": str(kubeconfig),
            "LENS_SERVICE__DATA_DIR": str(tmp_path),
        }
    )
    assert loaded.kube.kubeconfig == str(kubeconfig), "found at load"
    planned = demo_main.plan(loaded, preset="small", speed=1, directory=tmp_path / "demo")
    assert planned.config.kube == lens_config.KubeConfig()
    # What the launcher logs: the whole config at debug, each role's changed settings at info.
    everything = json.dumps(settings.to_plain(planned.config))
    assert "users-kubeconfig" not in everything
    for role in planned.roles:
        changed = launcher.changed(planned.config, role.sections)
        assert not [key for key in changed if key.startswith("kube.")], role.name


def test_an_unknown_preset_is_refused(tmp_path: Path) -> None:
    assert demo_main.PRESETS == ("small", "medium")
    with pytest.raises(ValueError, match="unknown scenario 'huge'"):
        demo_main.plan(config(), preset="huge", speed=1, directory=tmp_path)


def _held_now(cluster: LivingCluster) -> int:
    """GPUs held now, by the truth."""
    now = time.time()
    return sum(len(h.gpus) for h in cluster.player.truth.holds if h.holds_at(now))


def _longest_holder(cluster: LivingCluster, node: str, gpu: int, minute: float) -> str | None:
    """Who held `gpu` of `node` longest in the minute from `minute`, by the truth (as the API
    names a GPU's holder: its latest minute's longest)."""
    held = [
        (h.held_seconds(minute, minute + 60), h)
        for h in cluster.player.truth.holds
        if h.node == node and gpu in h.gpus
    ]
    held = [(seconds, h) for seconds, h in held if seconds > 0]
    if not held:
        return None
    _, longest = min(held, key=lambda sh: (-sh[0], sh[1].namespace, sh[1].pod_name))
    return f"{longest.namespace}/{longest.pod_name}"


def _gpus(demo: RunningDemo) -> list[dict[str, Any]]:
    gpus = demo.answer("/v1/gpus?page_size=1000")
    assert isinstance(gpus, dict)
    return list(gpus["data"])


@pytest.mark.timeout(180)
def test_the_api_shows_the_gpus_and_pods_the_simulator_enacted(tmp_path: Path) -> None:
    """Through the real pipeline — container events and GPU-minutes from each node's agent,
    the controller's pods, the jobs' allocation — the API shows which pod held each GPU of
    each node in its latest minute, and how many GPUs are allocated, as the simulator enacted
    them."""
    demo = RunningDemo(tmp_path)
    try:
        assert demo.agents.started.wait(30)
        demo.agents.check_started()  # what the demo's /readyz asks
        deadline = time.monotonic() + 120
        gpus = _gpus(demo)
        while any(g["as_of"] is None for g in gpus):  # until each GPU has a minute reported
            assert time.monotonic() < deadline, gpus
            time.sleep(0.5)
            gpus = _gpus(demo)
        assert len(gpus) == 16
        for gpu in gpus:
            holder = gpu["holder"]
            shown = None if holder is None else f"{holder['namespace']}/{holder['pod_name']}"
            expected = _longest_holder(demo.cluster, gpu["node"], gpu["gpu_id"], gpu["as_of"])
            assert shown == expected, gpu
        assert sum(g["holder"] is not None for g in gpus) >= 13  # the first pods: 13 GPUs
        overview = demo.answer("/v1/clusters/overview")
        assert isinstance(overview, dict)
        assert (overview["totalNodes"], overview["totalGpus"]) == (2, 16)
        # The allocation job's figure (every 30 s) catches up with each change in seconds; the
        # small preset's pods change at 30 s, 60 s and 150 s: quiet stretches come.
        while overview["allocatedGpus"] != _held_now(demo.cluster):
            assert time.monotonic() < deadline, overview
            time.sleep(0.5)
            overview = demo.answer("/v1/clusters/overview")
            assert isinstance(overview, dict)
        about = demo.answer("/v1/about")
        assert isinstance(about, dict) and about["simulated"] and about["clock_rate"] == 1
        _check_training(demo, deadline)
    finally:
        demo.stop()


def _check_training(demo: RunningDemo, deadline: float) -> None:
    """The training job's log lines, shipped to the intake, are its training performance."""
    (job,) = {
        h.workload for h in demo.cluster.player.truth.holds if h.workload.kind == "PyTorchJob"
    }
    end = round(time.time() * 1000) + 60_000
    path = f"/v1/workloads/{job.uid}/trainingPerformance?start=0&end={end}"
    while not (points := _bare(demo, path)):
        assert time.monotonic() < deadline, "no training figures"
        time.sleep(0.5)
    metrics = {point["metric"] for point in points}
    assert {"lm_loss", "tflops", "elapsed_time_per_iteration_ms", "current_iteration"} <= metrics
    iterations = [p["value"] for p in points if p["metric"] == "current_iteration"]
    assert iterations == list(range(1, len(iterations) + 1)), "each iteration once, in order"


def _bare(demo: RunningDemo, path: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(demo.url + path.lstrip("/"), timeout=10) as response:
        found: list[dict[str, Any]] = json.loads(response.read())
        return found
