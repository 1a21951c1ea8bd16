"""Controller, jobs and node agent composed into one process on one port, as `lens up` will:
/metrics holds every role's families once, /readyz names every role's checks, the controller's
rows arrive, SIGTERM stops it all within the stop timeout, and a failed part is named."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from lens.runtime.clock import SystemClock
from lens.runtime.config import DatabaseConfig
from lens.sim.hosts.tree import HostTree
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import spec
from lens.sim.scenario.player import ScenarioPlayer
from lens.store import database, models
from tests.opsport import get

pytestmark = pytest.mark.slow_timeout

STOP_TIMEOUT = 5.0

# The composition `lens up` will make: three roles launched into one process.
COMPOSE = """
import sys
import typer
from lens.cli import common
from lens.roles.controller import main as controller
from lens.roles.jobs import main as jobs
from lens.roles.node_agent import main as node_agent
try:
    common.launch(common.load(sys.argv[1]), controller.ROLE, jobs.ROLE, node_agent.ROLE)
except typer.Exit as stopped:
    sys.exit(stopped.exit_code)
"""


@pytest.fixture
def cluster() -> Iterator[KubeApiServer]:
    kube = KubeApiServer(bookmark_interval=0.5, history_size=10_000).start()
    ScenarioPlayer(spec.small(), kube, clock=SystemClock()).load()
    yield kube
    kube.stop()


def _config(
    tmp_path: Path, kube: KubeApiServer, tree: HostTree, free_port: Callable[[], int]
) -> tuple[Path, int, int]:
    port, grpc_port = free_port(), free_port()
    settings = {
        "server": {"host": "127.0.0.1", "port": port},
        "service": {
            "data_dir": str(tmp_path),
            "stop_timeout_seconds": STOP_TIMEOUT,
            "readiness_interval_seconds": 0.5,
        },
        "logging": {"format": "json"},
        "database": {"url": f"sqlite:///{tmp_path}/lens.db"},
        "kube": {"source": "kubeconfig", "kubeconfig": str(kube.write_kubeconfig(tmp_path / "kc"))},
        "controller": {"leader_election": False},
        "jobs": {"grpc_host": "127.0.0.1", "grpc_port": grpc_port},
        "host": {"root": str(tree.root)},
        "containers": {"containerd_address": ""},
    }
    path = tmp_path / "lens.yaml"
    path.write_text(yaml.safe_dump(settings))
    return path, port, grpc_port


def _start(path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", COMPOSE, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_ready(process: subprocess.Popen[str], port: int) -> dict[str, object]:
    deadline = time.monotonic() + 40
    body = ""
    while time.monotonic() < deadline and process.poll() is None:
        status, body = get(port, "/readyz")
        if status == 200:
            return dict(json.loads(body))
        time.sleep(0.2)
    process.kill()
    _out, err = process.communicate()
    raise AssertionError(f"never ready: {body!r}\n{err[-3000:]}")


def test_three_roles_share_one_process_and_one_port(
    tmp_path: Path, cluster: KubeApiServer, mi300x: HostTree, free_port: Callable[[], int]
) -> None:
    path, port, _ = _config(tmp_path, cluster, mi300x, free_port)
    process = _start(path)
    try:
        ready = _wait_ready(process, port)
        checks = set(ready["checks"])  # type: ignore[call-overload]
        assert checks == {"database", "watches", "cluster_caches", "collection", "static_facts"}
        deadline = time.monotonic() + 20
        text = ""
        while time.monotonic() < deadline and "lens_controller_leader 1.0" not in text:
            text = get(port, "/metrics")[1]
            time.sleep(0.3)
        types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
        assert len(types) == len(set(types)), "every family once"
        assert {
            "lens_gpu_info",  # node agent
            "lens_collector_success",
            "lens_events_committed_total",  # jobs
            "lens_controller_leader",  # controller
            "lens_http_requests_total",  # the process
            "process_resident_memory_bytes",
        } <= set(types)
        assert text.count("lens_gpu_info{") == 8
        assert get(port, "/v1/gpus")[0] == 200, "the node agent's REST on the same port"
        db = database.open_database(DatabaseConfig(url=f"sqlite:///{tmp_path}/lens.db"))
        with database.session(db):
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not models.GpuPod.select().count():
                time.sleep(0.3)
            assert models.GpuPod.select().count() > 0, "the controller wrote the scenario's pods"
        stopping = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=STOP_TIMEOUT + 5) == 0
        assert time.monotonic() - stopping < STOP_TIMEOUT
    finally:
        if process.poll() is None:
            process.kill()
        _out, err = process.communicate()
    stopped = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert stopped[-1]["msg"] == "service stopped"


def test_a_part_that_fails_stops_the_process_and_is_named(
    tmp_path: Path, cluster: KubeApiServer, mi300x: HostTree, free_port: Callable[[], int]
) -> None:
    path, _port, grpc_port = _config(tmp_path, cluster, mi300x, free_port)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", grpc_port))
        taken.listen()
        process = _start(path)
        code = process.wait(timeout=30)
        _out, err = process.communicate()
    assert code == 1
    last = err.strip().splitlines()[-1]
    assert last == (
        f"lens: cannot listen on 127.0.0.1:{grpc_port} for the event server (gRPC): the port is "
        "in use; choose another port with the jobs.grpc_port setting or LENS_JOBS__GRPC_PORT"
    ), err[-2000:]
    logged = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    (stopped,) = [e for e in logged if e["msg"] == "process stopped: a part failed"]
    assert stopped["failure"].startswith("jobs: event-server: ListenError: "), "role and part"
