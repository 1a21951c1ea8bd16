"""`lens up`: what runs where (plan), and the whole command as a child process — up, serving
the dashboard and the API, streaming the agent's events to the jobs, stopped cleanly by
Ctrl-C (SIGINT)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from lens.roles.up import main as up
from lens.runtime.config import Config, ContainersConfig, JobsConfig, KubeConfig
from lens.sim.kube.server import KubeApiServer

pytestmark = pytest.mark.slow_timeout


def _no_cluster(_config: Config) -> str:
    return "config: kube.kubeconfig: a kubeconfig"


def test_without_a_cluster_the_controller_is_left_out_with_a_line(tmp_path: Path) -> None:
    config = Config(
        jobs=JobsConfig(grpc_port=9911),
        containers=ContainersConfig(containerd_address=str(tmp_path / "none.sock")),
    )
    planned = up.plan(config, reachable=_no_cluster)
    assert [role.name for role in planned.roles] == ["node-agent", "jobs", "api"]
    assert planned.config.jobs.watch_cluster == "off"
    assert planned.config.jobs.grpc_host == "127.0.0.1"
    assert planned.config.events.server_address == "127.0.0.1:9911"
    assert planned.config.containers.containerd_address == ""
    assert len(planned.notes) == 2
    assert planned.notes[0] == f"containerd not followed: no socket at {tmp_path / 'none.sock'}"
    assert planned.notes[1] == (
        "controller not running: no Kubernetes API found (config: kube.kubeconfig: a kubeconfig)"
    )


def test_an_api_that_does_not_answer_leaves_the_controller_out(
    free_port: Callable[[], int],
) -> None:
    port = free_port()  # nothing listens there
    planned = up.plan(Config(kube=KubeConfig(source="url", url=f"http://127.0.0.1:{port}")))
    assert "controller" not in [role.name for role in planned.roles]
    said = f"controller not running: no Kubernetes API found (http://127.0.0.1:{port} does not"
    assert planned.notes[-1].startswith(said + " answer: ")


def test_with_a_cluster_the_controller_runs_too(apiserver: KubeApiServer, tmp_path: Path) -> None:
    socket = tmp_path / "containerd.sock"
    socket.touch()
    config = Config(
        kube=KubeConfig(source="url", url=apiserver.url),
        containers=ContainersConfig(containerd_address=str(socket)),
    )
    planned = up.plan(config)
    assert [role.name for role in planned.roles] == ["node-agent", "jobs", "controller", "api"]
    assert planned.notes == ()
    assert planned.config.jobs.watch_cluster == "auto"
    assert planned.config.containers.containerd_address == str(socket)


def _wait(read: Callable[[], str], pattern: str, timeout: float = 30.0) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, read())
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"no {pattern!r} in:\n{read()[-3000:]}")


def test_lens_up_serves_the_dashboard_and_stops_on_ctrl_c(
    tmp_path: Path, free_port: Callable[[], int]
) -> None:
    log = tmp_path / "up.log"
    env = {
        **os.environ,
        "LENS_SERVICE__DATA_DIR": str(tmp_path / "data"),
        "LENS_SERVER__PORT": "0",
        "LENS_API__PORT": "0",
        "LENS_JOBS__GRPC_PORT": str(free_port()),
        "LENS_KUBE__SOURCE": "kubeconfig",
        "LENS_KUBE__KUBECONFIG": str(tmp_path / "no-kubeconfig"),
        "LENS_CONTAINERS__CONTAINERD_ADDRESS": str(tmp_path / "no-containerd.sock"),
    }
    with log.open("wb") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "lens", "up"], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        said = lambda: log.read_text(errors="replace")  # noqa: E731
        url = _wait(said, r"Lens is up: (http://127\.0\.0\.1:\d+/)").group(1)
        assert "lens up: controller not running: no Kubernetes API found" in said()
        with urllib.request.urlopen(url, timeout=10) as page:
            assert b'<script type="module" src="ui/app.js">' in page.read()
        with urllib.request.urlopen(url + "v1/about", timeout=10) as answer:
            assert json.loads(answer.read())["data"]["simulated"] is False
        _wait(said, r'"event stream open"')
        assert (tmp_path / "data" / "lens.db").exists()  # SQLite under the data directory
        child.send_signal(signal.SIGINT)
        assert child.wait(30) == 0
        assert '"service stopped"' in said() or '"stopped"' in said()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
