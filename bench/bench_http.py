"""Cost of serving /metrics: a role's stdlib OpsServer against uvicorn (plain ASGI and FastAPI).

Each server runs alone in its own process (bench/http_servers.py) and answers GET /metrics with
the same pre-rendered bytes: by default the node agent's exposition of a simulated 8-GPU,
8-RDMA-port node. One kept-alive client connection then measures, per server:
1. `--requests` sequential requests: server CPU per request, requests/s, p50/p99 latency;
2. `--seconds` with no request, then `--seconds` of a 1 Hz scrape: the server's CPU share of one
   core (the node agent's budget is 1 %, its own work included);
3. the server's resident memory.
Each server runs `--repeat` times, in turn with the others; each figure is the median of its runs.
CPU is the server's threads' run time from /proc/<pid>/task/*/schedstat (nanoseconds, not the
10 ms ticks of /proc/<pid>/stat, which a 1 Hz scrape would hardly register). Ratios are each ASGI
server's figure over stdlib's. uvicorn keeps idle connections 75 s, as the stdlib server does.
"""

from __future__ import annotations

import argparse
import http.client
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench import http_servers, processes

_INSTALL = "pip install 'uvicorn[standard]' fastapi"
_RATIO_KEYS = (
    "cpu_us_per_request",
    "requests_per_s",
    "p50_ms",
    "p99_ms",
    "idle_cpu_percent_of_one_core",
    "scrape_1hz_cpu_percent_of_one_core",
    "rss_mib",
)


def _node_body() -> bytes:
    """/metrics of `lens node-agent` on a simulated node, fetched once it is ready."""
    from lens.sim.hosts.state import NodeSpec
    from lens.sim.hosts.tree import HostTree

    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="lens-bench-", dir=base) as directory:
        tree = HostTree(Path(directory) / "node", NodeSpec(gpus=8, rdma=8)).build()
        port = processes.free_port()
        env = {
            **os.environ,
            "LENS_SERVER__HOST": "127.0.0.1",
            "LENS_LOGGING__LEVEL": "error",  # its start-up readiness warnings are expected
            "LENS_CONTAINERS__CONTAINERD_ADDRESS": "",  # GPUs and RDMA only: no containerd here
        }
        command = [sys.executable, "-m", "lens", "node-agent", "--host-root", str(tree.root)]
        with subprocess.Popen([*command, "--port", str(port)], env=env) as agent:
            try:
                processes.wait_ready(port, time.monotonic() + 60, what="the node agent")
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                connection.request("GET", "/metrics")
                body = connection.getresponse().read()
                connection.close()
            finally:
                agent.terminate()
                agent.wait(timeout=15)
    return body


def _synthetic_body(kib: int) -> bytes:
    """Exposition text of about `kib` KiB, shaped like the node agent's GPU families."""
    lines: list[str] = []
    size, family = 0, 0
    while size < kib * 1024:
        name = f"lens_gpu_bench_{family}_watts"
        lines += [f"# HELP {name} A benchmark family, in watts.", f"# TYPE {name} gauge"]
        for gpu in range(8):
            labels = f'gpu="{gpu}",card="card{gpu}",pci_bus_id="0000:{gpu:02x}:00.0",model="MI300X"'
            lines.append(f"{name}{{{labels}}} {100.0 + gpu + family / 7:.3f}")
        size = sum(len(line) + 1 for line in lines)
        family += 1
    return ("\n".join(lines) + "\n").encode()


def _thread_cpu(pid: int) -> dict[str, int]:
    """Run time so far of each live thread of the process, in ns (schedstat's first field)."""
    times: dict[str, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            times[task.name] = int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            continue  # the thread ended meanwhile
    return times


class _CpuWindow:
    """The server's CPU seconds from construction to `seconds()`, summed thread by thread.

    A thread that ends inside the window (a thread-pool worker idling out) takes only its time in
    the window with it, not all it ran before, as a sum of totals would.
    """

    def __init__(self, pid: int) -> None:
        self._pid = pid
        self._start = _thread_cpu(pid)

    def seconds(self) -> float:
        end = _thread_cpu(self._pid)
        return sum(ns - self._start.get(tid, 0) for tid, ns in end.items()) / 1e9


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _get(connection: http.client.HTTPConnection, size: int) -> float:
    started = time.perf_counter()
    try:
        connection.request("GET", "/metrics")
        response = connection.getresponse()
    except (http.client.RemoteDisconnected, ConnectionError):
        # The server closed the idle connection: connect again, as a scraper does.
        connection.close()
        started = time.perf_counter()
        connection.request("GET", "/metrics")
        response = connection.getresponse()
    body = response.read()
    took = time.perf_counter() - started
    if response.status != 200 or len(body) != size:
        raise RuntimeError(f"/metrics answered {response.status} with {len(body)} bytes")
    return took


def _percentile(sorted_values: list[float], share: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(share * len(sorted_values)))]


def _sequential(
    pid: int, connection: http.client.HTTPConnection, size: int, count: int
) -> dict[str, float]:
    cpu, started = _CpuWindow(pid), time.perf_counter()
    latencies = [_get(connection, size) for _ in range(count)]
    wall, cpu_seconds = time.perf_counter() - started, cpu.seconds()
    latencies.sort()
    return {
        "requests": count,
        "cpu_us_per_request": round(1e6 * cpu_seconds / count, 1),
        "requests_per_s": round(count / wall),
        "p50_ms": round(1000 * statistics.median(latencies), 3),
        "p99_ms": round(1000 * _percentile(latencies, 0.99), 3),
    }


def _cpu_share(pid: int, seconds: float, scrape: Callable[[], object] | None) -> tuple[float, int]:
    """The server's CPU share of one core, in percent, over `seconds`; `scrape` runs at 1 Hz."""
    cpu, started = _CpuWindow(pid), time.monotonic()
    scrapes, next_tick = 0, started
    while (now := time.monotonic()) - started < seconds:
        if scrape is not None and now >= next_tick:
            scrape()
            scrapes += 1
            next_tick += 1.0
        time.sleep(max(0.0, min(next_tick, started + seconds) - time.monotonic()))
    elapsed = time.monotonic() - started
    return round(100 * cpu.seconds() / elapsed, 4), scrapes


def _measure(kind: str, body_path: Path, size: int, args: argparse.Namespace) -> dict[str, object]:
    port = processes.free_port()
    command = [sys.executable, "-m", "bench.http_servers", kind, str(port), str(body_path)]
    spawned = time.monotonic()
    with subprocess.Popen(command, stdout=subprocess.DEVNULL) as process:
        try:
            if args.server_cpu is not None:  # before it starts threads: they inherit it
                os.sched_setaffinity(process.pid, {args.server_cpu})
            processes.wait_listening(port, time.monotonic() + 60, what=kind)
            ready = time.monotonic() - spawned
            # One connection throughout: no handler thread ends while CPU is being summed.
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            for _ in range(args.warmup):
                _get(connection, size)
            figures: dict[str, object] = {"ready_seconds": round(ready, 2)}
            figures.update(_sequential(process.pid, connection, size, args.requests))
            idle, _ = _cpu_share(process.pid, args.seconds, None)
            latencies: list[float] = []
            share, scrapes = _cpu_share(
                process.pid, args.seconds, lambda: latencies.append(_get(connection, size))
            )
            figures["idle_cpu_percent_of_one_core"] = idle
            figures["scrape_1hz_cpu_percent_of_one_core"] = share
            figures["scrape_1hz_scrapes"] = scrapes
            figures["scrape_1hz_p50_ms"] = round(1000 * statistics.median(latencies), 3)
            figures["rss_mib"] = _rss_mib(process.pid)
            figures["peak_rss_mib"] = processes.peak_rss_mib(process.pid)
            connection.close()
        finally:
            process.terminate()
            process.wait(timeout=15)
    return figures


def _medians(runs: list[dict[str, object]]) -> dict[str, object]:
    """Each figure's median over the runs, a measured value (median_low) when they are even."""
    medians: dict[str, object] = {"runs": len(runs)}
    for key in runs[0]:
        values = [run[key] for run in runs]
        numbers = [v for v in values if isinstance(v, int | float)]
        medians[key] = statistics.median_low(numbers) if len(numbers) == len(values) else values[0]
    return medians


def _unavailable(kind: str) -> str | None:
    """Why `kind` cannot run here, or None."""
    needs = {"uvicorn_h11": ("uvicorn",), "uvicorn_httptools": ("uvicorn", "httptools", "uvloop")}
    framework = ("uvicorn", "fastapi") if kind.startswith("fastapi") else ()
    for module in needs.get(kind, framework):
        if importlib.util.find_spec(module) is None:
            return (
                f"not measured: {module} is not installed (pip install 'uvicorn[standard]' fastapi)"
            )
    return None


def _describe(kind: str) -> str:
    if kind == "stdlib":
        return "lens OpsServer: http.server.ThreadingHTTPServer, a thread per connection"
    if kind == "uvicorn_h11":
        return "uvicorn, h11 + asyncio (pip install uvicorn), plain ASGI callable"
    if kind == "uvicorn_httptools":
        return "uvicorn, httptools + uvloop (uvicorn[standard]), plain ASGI callable"
    stack = "httptools + uvloop" if http_servers.fast_stack_installed() else "h11 + asyncio"
    route = "sync route (thread pool)" if kind == "fastapi" else "async route"
    return f"FastAPI {route} on uvicorn, {stack}"


def run(argv: list[str]) -> dict[str, object]:
    parser = argparse.ArgumentParser(prog="python -m bench http")
    parser.add_argument("--requests", type=int, default=5000, help="sequential requests timed")
    parser.add_argument("--warmup", type=int, default=200, help="requests before timing")
    parser.add_argument("--seconds", type=float, default=20, help="each idle and 1 Hz window")
    parser.add_argument("--servers", default=",".join(http_servers.KINDS), help="which servers")
    parser.add_argument("--body", choices=("node", "synthetic"), default="node")
    parser.add_argument("--body-kib", type=int, default=68, help="size of a synthetic body")
    parser.add_argument("--repeat", type=int, default=3, help="runs per server; medians count")
    args = parser.parse_args(argv)
    cpus = sorted(os.sched_getaffinity(0))
    # Server and client each on a core of their own: steadier figures, and the server's CPU
    # is one core's worth, as the node agent's budget is counted.
    args.server_cpu = cpus[-1] if len(cpus) > 1 else None
    body = _node_body() if args.body == "node" else _synthetic_body(args.body_kib)
    figures: dict[str, object] = {
        "body": "lens node-agent /metrics, simulated 8-GPU 8-RDMA-port node"
        if args.body == "node"
        else "synthetic exposition text",
        "body_bytes": len(body),
        "body_samples": sum(1 for line in body.splitlines() if not line.startswith(b"#")),
    }
    if args.server_cpu is not None:
        os.sched_setaffinity(0, set(cpus[:-1]))
        figures["server_cpu"] = args.server_cpu
    kinds = args.servers.split(",")
    for kind in kinds:
        why_not = _unavailable(kind)
        if why_not is not None:
            print(f"bench http: {kind} {why_not}", file=sys.stderr)
            figures[kind] = {"server": _describe(kind), "skipped": why_not}
    runs: dict[str, list[dict[str, object]]] = {k: [] for k in kinds if k not in figures}
    with tempfile.NamedTemporaryFile(prefix="lens-bench-body-") as body_file:
        body_file.write(body)
        body_file.flush()
        for _ in range(args.repeat):  # in turn, so a noisy minute spoils one run of each
            for kind, measured in runs.items():
                measured.append(_measure(kind, Path(body_file.name), len(body), args))
    for kind, measured in runs.items():
        figures[kind] = {"server": _describe(kind), **_medians(measured)}
    baseline = figures.get("stdlib")
    for kind in kinds:
        entry = figures.get(kind)
        if kind == "stdlib" or not isinstance(entry, dict) or "skipped" in entry:
            continue
        if isinstance(baseline, dict) and "skipped" not in baseline:
            entry["ratio_to_stdlib"] = {
                key: round(entry[key] / baseline[key], 2) if baseline[key] else None
                for key in _RATIO_KEYS
            }
    return figures
