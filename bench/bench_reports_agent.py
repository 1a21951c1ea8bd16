"""The node agent's per-minute device reports: what they add to the agent's CPU, on a simulated
8 x MI300X node with 8 RDMA ports at the default 1 s cycle.

1. In-process, over `--cycles` cycles of a fake clock advancing 1 s while the tree's readings
   move: the collection cycle's CPU (reports off) and, after each cycle, the reports' own work
   on the same readings (samples fed to the summarisers, minutes closed and encoded, holdings
   and inventory checked), timed on the thread that does it.
2. `lens node-agent` as its own process for `--seconds`, streaming to a `lens jobs` on SQLite,
   once with device reports off and once on: its CPU share of one core.
Budgets (issue 17): the whole agent at most 1 % of one core; the summaries at most 0.05 %.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench import processes
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.roles.node_agent import main as node_agent
from lens.roles.node_agent.reporting import DeviceReports, ReportMetrics
from lens.runtime.clock import FakeClock
from lens.runtime.config import Config, ContainersConfig, HostConfig, ServerConfig
from lens.runtime.process import Process
from lens.runtime.selfmetrics import SelfMetrics
from lens.sim.hosts.state import NodeSpec
from lens.sim.hosts.tree import HostTree

MINUTE_START = 1_800_000_000.0 - 1_800_000_000.0 % 60


def _in_process(directory: Path, cycles: int) -> dict[str, float]:
    clock = FakeClock(start_time=MINUTE_START)
    tree = HostTree(directory / "in-process", NodeSpec(gpus=8, rdma=8), clock=clock).build()
    config = Config(
        host=HostConfig(root=str(tree.root)),
        server=ServerConfig(host="127.0.0.1", port=0),
        containers=ContainersConfig(containerd_address=""),
    )
    process = Process(
        "node-agent",
        server=config.server,
        service=config.service,
        clock=clock,
        handle_signals=False,
    )
    agent = node_agent.build(config, process)  # events.server_address empty: reports off
    records: list[pb.Record] = []
    reports = DeviceReports(
        state=agent.state,
        present=agent.vendors.present,
        gpu_interval_seconds=1.0,
        rdma_interval_seconds=1.0,
        put=records.append,
        containers=None,
        metrics=ReportMetrics(SelfMetrics(process=False)),
    )
    cycle_cpu = reports_cpu = 0.0
    try:
        for n in range(cycles + 5):
            tree.update()
            started = time.thread_time()
            agent.cycle.run()
            middle = time.thread_time()
            reports.after_cycle()
            ended = time.thread_time()
            if n >= 5:  # after the warm-up: label caches, first listings, first inventory
                cycle_cpu += middle - started
                reports_cpu += ended - middle
            clock.advance(1.0)
    finally:
        agent.cycle.close()
    minutes = sum(
        len(r.gpu_minutes.items) + len(r.port_minutes.items)
        for r in records
        if r.WhichOneof("body") in ("gpu_minutes", "port_minutes")
    )
    return {
        "cycles": cycles,
        "cycle_cpu_ms": round(1000 * cycle_cpu / cycles, 3),
        "reports_cpu_ms": round(1000 * reports_cpu / cycles, 4),
        "reports_share_of_one_core_percent": round(100 * reports_cpu / cycles, 4),
        "minutes_reported": minutes,
    }


@contextlib.contextmanager
def _child(command: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        command, env={**os.environ, **env}, stdout=subprocess.DEVNULL, cwd=Path(__file__).parents[1]
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@contextlib.contextmanager
def _lens_jobs(directory: Path) -> Iterator[str]:
    grpc_port, http_port = processes.free_port(), processes.free_port()
    env = {
        "LENS_DATABASE__URL": f"sqlite:///{directory / 'lens.db'}",
        "LENS_JOBS__GRPC_HOST": "127.0.0.1",
        "LENS_JOBS__GRPC_PORT": str(grpc_port),
        "LENS_SERVER__HOST": "127.0.0.1",
        "LENS_SERVER__PORT": str(http_port),
        "LENS_LOGGING__LEVEL": "warning",
    }
    with _child([sys.executable, "-m", "lens", "jobs"], env):
        processes.wait_ready(http_port, time.monotonic() + 60, what="lens jobs")
        yield f"127.0.0.1:{grpc_port}"


def _agent_share(tree: HostTree, server: str, *, reports: bool, seconds: float) -> float:
    port = processes.free_port()
    env = {
        "LENS_SERVER__HOST": "127.0.0.1",
        "LENS_LOGGING__LEVEL": "warning",
        "LENS_CONTAINERS__CONTAINERD_ADDRESS": "",
        "LENS_EVENTS__SERVER_ADDRESS": server,
        "LENS_EVENTS__DEVICE_REPORTS": "true" if reports else "false",
    }
    command = [sys.executable, "-m", "lens", "node-agent", "--host-root", str(tree.root)]
    with _child([*command, "--port", str(port)], env) as child:
        processes.wait_ready(port, time.monotonic() + 60, what="the node agent")
        time.sleep(3)  # past start-up: imports, the first renders and the inventory
        cpu_start, start = processes.cpu_seconds(child.pid), time.monotonic()
        next_tick = start
        while time.monotonic() - start < seconds:
            tree.update()  # readings move, as on a busy node
            next_tick += 1.0
            time.sleep(max(0.0, next_tick - time.monotonic()))
        cpu = processes.cpu_seconds(child.pid) - cpu_start
        return round(100 * cpu / (time.monotonic() - start), 3)


def run(argv: list[str]) -> dict[str, object]:
    parser = argparse.ArgumentParser(prog="python -m bench reports_agent")
    parser.add_argument("--cycles", type=int, default=600, help="cycles timed in-process")
    parser.add_argument("--seconds", type=float, default=60, help="length of each process run")
    args = parser.parse_args(argv)
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="lens-bench-", dir=base) as name:
        directory = Path(name)
        in_process = _in_process(directory, args.cycles)
        tree = HostTree(directory / "node", NodeSpec(gpus=8, rdma=8)).build()
        with _lens_jobs(directory) as server:
            off = _agent_share(tree, server, reports=False, seconds=args.seconds)
            on = _agent_share(tree, server, reports=True, seconds=args.seconds)
    return {
        "node": "8 x MI300X, 8 RoCE ports (simulated tree in memory), 1 s cycle",
        "in_process": in_process,
        "reports_to_cycle_ratio": round(
            in_process["reports_cpu_ms"] / in_process["cycle_cpu_ms"], 4
        ),
        "agent_process_cpu_share_percent": {"reports_off": off, "reports_on": on},
        "budgets": {
            "agent_ok": on <= 1.0,
            "reports_ok": in_process["reports_share_of_one_core_percent"] <= 0.05,
        },
    }
