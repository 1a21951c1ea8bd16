"""`lens demo` as a person starts it: from the command to the first data on the overview.

Each run is a new `python -m lens demo --preset P` on free ports; the figures are, from the
moment the command starts: when it says "Lens is up", when /v1/clusters/overview first shows
every node of the preset with GPUs allocated (what the overview draws first), and — in the last
run of each preset — when the GPUs' utilization first appears (settled whole minutes, so a
minute or two at `--speed 1`), then the
demo's CPU use over `--steady` seconds of a living cluster, its peak memory, and how long
Ctrl-C takes. The baseline in the same run is `python -m lens version`: what any command costs
before it does anything.

`--mode sustained` (demo_sustained.py) finds instead the highest `--speed` each preset
sustains on this host, with every figure of each speed tried; it takes about 12 minutes for
both presets on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench import demo_sustained, processes

REPO = Path(__file__).resolve().parents[1]
FIRST_DATA_BUDGET_SECONDS = 15.0
NODES = {"small": 2, "medium": 100}
WAIT_SECONDS = 300.0


def _overview(port: int) -> dict[str, Any] | None:
    url = f"http://127.0.0.1:{port}/v1/clusters/overview"
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            data = json.loads(answer.read())["data"]
    except OSError:
        return None
    return data if isinstance(data, dict) else None


def _until(check: Any, started: float, what: str) -> float:
    """Seconds from `started` until `check()` is true."""
    while not check():
        if time.monotonic() - started > WAIT_SECONDS:
            raise RuntimeError(f"lens demo: no {what} after {WAIT_SECONDS:g} s")
        time.sleep(0.1)
    return round(time.monotonic() - started, 2)


def _one(preset: str, *, speed: float, last: bool, steady: float) -> dict[str, float]:
    port, ops = processes.free_port(), processes.free_port()
    directory = Path(tempfile.mkdtemp(prefix="lb-", dir="/tmp"))  # short: Unix sockets live there
    log = directory / "demo.log"
    command = [sys.executable, "-m", "lens", "demo", "--preset", preset, "--speed", str(speed)]
    command += ["--api-port", str(port), "--port", str(ops)]
    env = {**os.environ, "TMPDIR": str(directory)}
    started = time.monotonic()
    with log.open("wb") as out:
        child = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        said = lambda: log.read_text(errors="replace")  # noqa: E731
        figures = {"up_s": _until(lambda: "Lens is up" in said(), started, "URL")}

        def first_data() -> bool:
            shown = _overview(port)
            return (
                shown is not None
                and shown["totalNodes"] == NODES[preset]
                and (shown["allocatedGpus"] > 0)
            )

        figures["first_data_s"] = _until(first_data, started, "data on the overview")
        if last:
            figures.update(_living(child.pid, port, started, steady))
        stopping = time.monotonic()
        child.send_signal(signal.SIGINT)
        if child.wait(120) != 0:
            raise RuntimeError(f"lens demo exited {child.returncode}: {said()[-2000:]}")
        figures["stop_s"] = round(time.monotonic() - stopping, 2)
        return figures
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        shutil.rmtree(directory, ignore_errors=True)


def _living(pid: int, port: int, started: float, steady: float) -> dict[str, float]:
    def utilization() -> bool:
        shown = _overview(port)
        return shown is not None and shown["utilization"] is not None

    first = _until(utilization, started, "utilization")
    cpu, wall = processes.cpu_seconds(pid), time.monotonic()
    time.sleep(steady)
    used = processes.cpu_seconds(pid) - cpu
    return {
        "first_utilization_s": first,
        "steady_cpu_percent": round(100 * used / (time.monotonic() - wall), 1),
        "peak_rss_mib": processes.peak_rss_mib(pid),
    }


def _cli_start(runs: int) -> float:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "lens", "version"],
            cwd=REPO,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


def run(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench demo")
    parser.add_argument("--mode", choices=("start", "sustained"), default="start")
    parser.add_argument("--presets", default="small,medium", help="comma-separated presets")
    parser.add_argument("--runs", type=int, default=3, help="starts measured per preset")
    parser.add_argument("--steady", type=float, default=60.0, help="seconds of CPU measured")
    parser.add_argument("--speed", type=float, default=1.0, help="lens demo --speed")
    parser.add_argument(
        "--speeds",
        default=",".join(f"{s:g}" for s in demo_sustained.LADDER),
        help="sustained: the speeds tried, highest first",
    )
    parser.add_argument(
        "--window",
        type=float,
        default=None,
        help="sustained: real seconds measured per speed (default: the definition's window)",
    )
    args = parser.parse_args(argv)
    baseline = _cli_start(5)
    if args.mode == "sustained":
        return _sustained(args.presets.split(","), args.speeds, baseline, window=args.window)
    results: dict[str, Any] = {
        "speed": args.speed,
        "cli_start_s": round(baseline, 2),
        "presets": {},
    }
    worst = 0.0
    for preset in args.presets.split(","):
        runs = [
            _one(preset, speed=args.speed, last=i == args.runs - 1, steady=args.steady)
            for i in range(args.runs)
        ]
        first = statistics.median(r["first_data_s"] for r in runs)
        worst = max(worst, max(r["first_data_s"] for r in runs))
        results["presets"][preset] = {
            "nodes": NODES[preset],
            "first_data_p50_s": round(first, 2),
            "first_data_to_cli_start_ratio": round(first / baseline, 1),
            "runs": runs,
        }
    results["budgets"] = {
        "worst_first_data_s": worst,
        "first_data_ok": worst <= FIRST_DATA_BUDGET_SECONDS,
    }
    return results


def _sustained(
    presets: list[str], speeds: str, baseline: float, *, window: float | None
) -> dict[str, Any]:
    ladder = tuple(sorted((float(s) for s in speeds.split(",")), reverse=True))
    return {
        "mode": "sustained",
        "cli_start_s": round(baseline, 2),
        "loadavg_at_start": [round(load, 2) for load in os.getloadavg()],
        "definition": {
            "window_cluster_s": demo_sustained.WINDOW_CLUSTER_SECONDS,
            "window_real_s": [demo_sustained.WINDOW_MIN_SECONDS, demo_sustained.WINDOW_MAX_SECONDS],
            "clock_kept": demo_sustained.CLOCK_KEPT,
            "live_s": demo_sustained.LIVE_SECONDS,
            "held_slack": [demo_sustained.HELD_SLACK_GPUS, demo_sustained.HELD_SLACK_RATIO],
        },
        "presets": {
            preset: demo_sustained.highest(preset, ladder, window=window) for preset in presets
        },
        "loadavg_at_end": [round(load, 2) for load in os.getloadavg()],
    }
