"""What `lens netflow` costs the node, against the original's way (REFERENCE 9: one record per
segment sent to userspace): `python -m bench netflow [--seconds 5] [--rate 10000] [--repeat 3]
[--loop-rounds 400] [--loop-connections 500]`.

Two network namespaces joined by a veth pair carry, per observer (none, `lens netflow` with eBPF,
and the per-segment baseline of bench/netflow_baseline.py, on the same tracepoints):
1. short connections paced at `--rate` a second (64 bytes each way's request, the server
   closing first), for `--seconds`;
2. a bulk transfer as fast as the veth takes, for `--seconds`.
For each: the observer's CPU as a share of one core, split into its process (its threads' run
time from /proc/<pid>/task/*/schedstat) and its BPF programs (run_time_ns of each program's
fdinfo, with kernel.bpf_stats_enabled on for the run: an upper bound, as it counts the stats'
own clock reads), and the traffic's own throughput; the throughput lost is each observer's
against none's. Each figure is the median of `--repeat` runs.
3. Before them, the kernel's share per connection measured whole (tracepoint dispatch
   included, which bpf_stats leaves out): bench/netflow_connection_cost.py, `--loop-rounds`
   rounds, each measuring every attachment of Lens's programs (raw tracepoints, what `lens
   netflow` runs where the kernel has BTF, and the ordinary ones) between two runs of
   `--loop-connections` connections without them.
Needs root (namespaces, BPF).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench import netflow_connection_cost, processes

TRAFFIC = Path(__file__).with_name("netflow_traffic.py")
BASELINE = Path(__file__).with_name("netflow_baseline.py")
CLIENT, SERVER = "lens-bench-nf-c", "lens-bench-nf-s"
CLIENT_IP, SERVER_IP = "10.204.0.1", "10.204.0.2"
STATS = Path("/proc/sys/kernel/bpf_stats_enabled")


@dataclass(frozen=True, slots=True)
class Sample:
    user_percent: float
    bpf_percent: float
    throughput: float


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@contextlib.contextmanager
def _link() -> Iterator[None]:
    for namespace in (CLIENT, SERVER):
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)
        _ip("netns", "add", namespace)
    try:
        _ip("link", "add", "lbnc", "netns", CLIENT, "type", "veth", "peer", "name", "lbns",
            "netns", SERVER)  # fmt: skip
        for namespace, device, address in (
            (CLIENT, "lbnc", CLIENT_IP),
            (SERVER, "lbns", SERVER_IP),
        ):
            _ip("-n", namespace, "addr", "add", f"{address}/24", "dev", device)
            _ip("-n", namespace, "link", "set", device, "up")
            _ip("-n", namespace, "link", "set", "lo", "up")
        yield
    finally:
        for namespace in (CLIENT, SERVER):
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)


def _traffic(namespace: str, *args: str) -> subprocess.Popen[str]:
    command = ["ip", "netns", "exec", namespace, sys.executable, str(TRAFFIC), *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


def _last_json(process: subprocess.Popen[str]) -> dict[str, float]:
    out, _ = process.communicate(timeout=120)
    return dict(json.loads(out.strip().splitlines()[-1]))


def _run_ns(pid: int | None) -> int:
    """CPU nanoseconds of every thread of `pid` so far."""
    if pid is None:
        return 0
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            total += int((task / "schedstat").read_text().split()[0])
    return total


def _bpf_ns(pid: int | None) -> int:
    """Run time of the BPF programs `pid` holds, so far (kernel.bpf_stats_enabled on)."""
    if pid is None:
        return 0
    total = 0
    for info in Path(f"/proc/{pid}/fdinfo").iterdir():
        with contextlib.suppress(OSError):
            text = info.read_text()
            if "prog_type" in text:
                total += next(
                    int(line.split()[1])
                    for line in text.splitlines()
                    if line.startswith("run_time_ns")
                )
    return total


def _measure(pid: int | None, run: subprocess.Popen[str], *, key: str) -> Sample:
    user, bpf, start = _run_ns(pid), _bpf_ns(pid), time.monotonic()
    figures = _last_json(run)
    wall = time.monotonic() - start
    return Sample(
        user_percent=(_run_ns(pid) - user) / 1e9 / wall * 100,
        bpf_percent=(_bpf_ns(pid) - bpf) / 1e9 / wall * 100,
        throughput=figures[key],
    )


def _short(pid: int | None, seconds: float, rate: float, port: int) -> Sample:
    server = _traffic(SERVER, "accept", str(port), str(seconds + 3))
    assert server.stdout is not None
    server.stdout.readline()
    client = _traffic(CLIENT, "connect", SERVER_IP, str(port), str(seconds), str(rate))
    sample = _measure(pid, client, key="per_second")
    server.communicate(timeout=30)
    return sample


def _bulk(pid: int | None, seconds: float, port: int) -> Sample:
    server = _traffic(SERVER, "sink", str(port), str(seconds))
    assert server.stdout is not None
    server.stdout.readline()
    client = _traffic(CLIENT, "bulk", SERVER_IP, str(port), str(seconds))
    sample = _measure(pid, client, key="bytes_per_second")
    server.communicate(timeout=30)
    return sample


@contextlib.contextmanager
def _observer(kind: str, directory: Path) -> Iterator[int | None]:
    if kind == "none":
        yield None
        return
    if kind == "lens":
        port = processes.free_port()
        config = directory / "lens.yaml"
        config.write_text(
            f"server: {{host: 127.0.0.1, port: {port}}}\nlogging: {{level: error}}\n"
            "netflow: {backend: ebpf}\n"
        )
        process = subprocess.Popen(
            [sys.executable, "-m", "lens", "netflow", "--config", str(config)]
        )
        processes.wait_ready(port, time.monotonic() + 120, what="lens netflow")
    else:
        process = subprocess.Popen(
            [sys.executable, str(BASELINE)], stdout=subprocess.PIPE, text=True
        )
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    try:
        yield process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


def _median(samples: list[Sample]) -> dict[str, float]:
    return {
        "observer_process_percent_of_one_core": round(
            statistics.median(s.user_percent for s in samples), 3
        ),
        "observer_bpf_percent_of_one_core": round(
            statistics.median(s.bpf_percent for s in samples), 3
        ),
        "observer_total_percent_of_one_core": round(
            statistics.median(s.user_percent + s.bpf_percent for s in samples), 3
        ),
        "throughput": round(statistics.median(s.throughput for s in samples), 1),
    }


def run(argv: list[str]) -> dict[str, object]:
    parser = argparse.ArgumentParser(prog="python -m bench netflow")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rate", type=float, default=10_000.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--loop-rounds", type=int, default=400)
    parser.add_argument("--loop-connections", type=int, default=500)
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("python -m bench netflow needs root (network namespaces, BPF)")
    stats_before = STATS.read_text().strip()
    figures: dict[str, object] = {"load_average_before": os.getloadavg()}
    results: dict[str, dict[str, dict[str, float]]] = {}
    port = 7900
    try:
        STATS.write_text("0\n")
        with tempfile.TemporaryDirectory(prefix="lens-bench-nf-loop-") as directory:
            figures["connection_cost"] = netflow_connection_cost.measure(
                netflow_connection_cost.compile_loop(Path(directory)),
                rounds=args.loop_rounds,
                connections=args.loop_connections,
            )
        STATS.write_text("1\n")
        with _link(), tempfile.TemporaryDirectory(prefix="lens-bench-nf-") as directory:
            for kind in ("none", "lens", "per_segment"):
                shorts, bulks = [], []
                with _observer(kind, Path(directory)) as pid:
                    for _ in range(args.repeat):
                        port += 1
                        shorts.append(_short(pid, args.seconds, args.rate, port))
                        port += 1
                        bulks.append(_bulk(pid, args.seconds, port))
                results[kind] = {"short_connections": _median(shorts), "bulk": _median(bulks)}
    finally:
        STATS.write_text(stats_before + "\n")
    for kind in ("lens", "per_segment"):
        for load in ("short_connections", "bulk"):
            alone = results["none"][load]["throughput"]
            observed = results[kind][load]["throughput"]
            results[kind][load]["throughput_lost_percent"] = round(
                (alone - observed) / alone * 100, 2
            )
    figures.update(results)
    figures["per_segment_over_lens_cpu"] = {
        load: round(
            results["per_segment"][load]["observer_total_percent_of_one_core"]
            / max(results["lens"][load]["observer_total_percent_of_one_core"], 1e-9),
            1,
        )
        for load in ("short_connections", "bulk")
    }
    figures["load_average_after"] = os.getloadavg()
    return figures
