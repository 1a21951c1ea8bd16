"""`python -m bench demo --mode sustained`: the highest `--speed` each preset of `lens demo`
sustains on this host (bench_demo.py runs it).

A speed is sustained when, over a window of WINDOW_CLUSTER_SECONDS of the cluster's time (at
least WINDOW_MIN_SECONDS and at most WINDOW_MAX_SECONDS of real time) after the demo has warmed
up (every GPU of the preset read once, the clock up to the speed asked), at every sample (every
SAMPLE_SECONDS of real time):
  - the clock keeps the speed: /v1/about's clock_rate is the speed asked (the pacer never
    slowed it), and over the window the cluster's time advanced by at least CLOCK_KEPT of the
    speed times the real time;
  - every GPU of the preset has a live reading: its latest minute on /v1/gpus is at most
    LIVE_SECONDS of the cluster's time behind the API's now;
  - every allocated GPU has a holder: GPUs with one on /v1/gpus are at least the overview's
    allocatedGpus less max(HELD_SLACK_GPUS, HELD_SLACK_RATIO of them) (a pod begun in the last
    two minutes of the cluster's time has no complete minute yet);
and over the window no error is logged (no "database is locked", no collector that "took longer
than" its time) and the agents' collection pass skipped at most SKIPPED_MAX of its slots
(lens_loop_skipped_total{loop="simulated-agents-collect"}; a pass longer than its 5 s of the
cluster's time now and then still reads each GPU within its 15 s).

The search: the top speed (the command's largest) first; if it does not hold, the speeds of the
ladder at or under the highest rate the clock ran at there (the pacer had it there), highest
first, until one holds or MAX_TRIALS were tried.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench import processes
from lens.roles.demo import agents

REPO = Path(__file__).resolve().parents[1]
GPUS = {"small": 16, "medium": 800}
TOP_SPEED = 60.0  # lens demo's largest
LADDER = (60.0, 40.0, 30.0, 20.0, 15.0, 10.0, 8.0, 6.0, 4.0, 3.0, 2.0, 1.0)
WINDOW_CLUSTER_SECONDS = 600.0
WINDOW_MIN_SECONDS = 60.0
WINDOW_MAX_SECONDS = 180.0
SAMPLE_SECONDS = 5.0
CLOCK_KEPT = 0.95
LIVE_SECONDS = 180.0
HELD_SLACK_GPUS = 2
HELD_SLACK_RATIO = 0.03
SKIPPED_MAX = 0.1
WARM_SECONDS = 300.0  # of real time, for the first readings
RAMP_STALL_SECONDS = 45.0  # the clock not rising for this long: it has found its rate
STOP_WAIT_SECONDS = 120.0
MAX_TRIALS = 4  # per preset: the top speed and three under it


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    """What the API said at one moment."""

    real: float  # monotonic seconds
    now: float  # the API's (cluster's) time
    clock_rate: float
    gpus: int
    live: int  # GPUs with a live reading
    held: int  # GPUs with a holder
    allocated: int


def window_seconds(speed: float) -> float:
    """Real seconds of the measuring window at `speed`."""
    return min(WINDOW_MAX_SECONDS, max(WINDOW_MIN_SECONDS, WINDOW_CLUSTER_SECONDS / speed))


def held_enough(held: int, allocated: int) -> bool:
    return held >= allocated - max(HELD_SLACK_GPUS, HELD_SLACK_RATIO * allocated)


def judge(
    samples: list[Sample], *, speed: float, gpus: int, errors: dict[str, int], skipped: float
) -> dict[str, Any]:
    """The figures of a window and whether `speed` held over it (the module's definition)."""
    first, last = samples[0], samples[-1]
    achieved = (last.now - first.now) / (last.real - first.real)
    slots = (last.now - first.now) / agents.TICK_SECONDS
    checks = {
        "clock_kept": all(s.clock_rate == speed for s in samples)
        and achieved >= CLOCK_KEPT * speed,
        "every_gpu_live": all(s.gpus == gpus and s.live == gpus for s in samples),
        "every_allocated_gpu_held": all(held_enough(s.held, s.allocated) for s in samples),
        "no_errors": not any(errors.values()),
        "agents_kept_pace": skipped <= SKIPPED_MAX * slots,
    }
    least_live = min(samples, key=lambda s: s.live)
    least_held = min(samples, key=lambda s: s.held - s.allocated)
    return {
        "sustained": all(checks.values()),
        "checks": checks,
        "achieved_rate": round(achieved, 2),
        "achieved_to_asked_ratio": round(achieved / speed, 3),
        "clock_rate_min": min(s.clock_rate for s in samples),
        "clock_rate_max": max(s.clock_rate for s in samples),
        "live_gpus_min": least_live.live,
        "held_min": {"held": least_held.held, "allocated": least_held.allocated},
        "errors": errors,
        "agents_skipped_slots": [skipped, round(slots)],
        "samples": len(samples),
    }


@dataclasses.dataclass
class _Demo:
    """A `lens demo` child process, its ports, log and temporary directory."""

    preset: str
    speed: float
    directory: Path
    api: int
    ops: int
    child: subprocess.Popen[bytes]

    @property
    def log(self) -> Path:
        return self.directory / "demo.log"

    def said(self) -> str:
        return self.log.read_text(errors="replace")

    def get(self, path: str, port: int | None = None) -> bytes:
        url = f"http://127.0.0.1:{port or self.api}{path}"
        with urllib.request.urlopen(url, timeout=30) as answer:
            body: bytes = answer.read()
            return body

    def data(self, path: str) -> Any:
        return json.loads(self.get(path))["data"]


def _start(preset: str, speed: float) -> _Demo:
    directory = Path(tempfile.mkdtemp(prefix="lb-", dir="/tmp"))  # short: Unix sockets live there
    api, ops = processes.free_port(), processes.free_port()
    command = [sys.executable, "-m", "lens", "demo", "--preset", preset, "--speed", f"{speed:g}"]
    command += ["--api-port", str(api), "--port", str(ops)]
    with (directory / "demo.log").open("wb") as out:
        child = subprocess.Popen(
            command,
            cwd=REPO,
            env={**os.environ, "TMPDIR": str(directory)},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return _Demo(preset=preset, speed=speed, directory=directory, api=api, ops=ops, child=child)


def _sample(demo: _Demo) -> Sample:
    about = demo.data("/v1/about")
    gpus = demo.data("/v1/gpus?page_size=1000")["data"]
    overview = demo.data("/v1/clusters/overview")
    now = float(about["now"])
    return Sample(
        real=time.monotonic(),
        now=now,
        clock_rate=float(about["clock_rate"]),
        gpus=len(gpus),
        live=sum(g["as_of"] is not None and now - g["as_of"] <= LIVE_SECONDS for g in gpus),
        held=sum(g["holder"] is not None for g in gpus),
        allocated=int(overview["allocatedGpus"]),
    )


def _until(demo: _Demo, done: Any, seconds: float, what: str) -> Sample:
    """Samples until `done(sample)`; RuntimeError after `seconds` or when the demo exits."""
    deadline = time.monotonic() + seconds
    while True:
        if demo.child.poll() is not None:
            raise RuntimeError(f"lens demo exited {demo.child.returncode}: {demo.said()[-2000:]}")
        try:
            sample = _sample(demo)
        except OSError:
            sample = None
        if sample is not None and done(sample):
            return sample
        if time.monotonic() > deadline:
            raise RuntimeError(f"lens demo {demo.preset}: no {what} after {seconds:g} s")
        time.sleep(1.0)


def _warm(demo: _Demo) -> float:
    """Real seconds until every GPU is read and the clock is at the speed asked or has stopped
    rising (the host's own rate)."""
    began = time.monotonic()
    gpus = GPUS[demo.preset]
    _until(demo, lambda s: s.gpus == gpus and s.live == gpus, WARM_SECONDS, "readings")
    rate, since = 0.0, time.monotonic()
    while True:
        sample = _until(demo, lambda _s: True, WARM_SECONDS, "answer")
        if sample.clock_rate >= demo.speed:
            break
        if sample.clock_rate > rate:
            rate, since = sample.clock_rate, time.monotonic()
        elif time.monotonic() - since > RAMP_STALL_SECONDS:
            break
        time.sleep(SAMPLE_SECONDS)
    return round(time.monotonic() - began, 1)


def _skipped(demo: _Demo) -> float:
    text = demo.get("/metrics", demo.ops).decode()
    name = 'lens_loop_skipped_total{loop="simulated-agents-collect"}'
    for line in text.splitlines():
        if line.startswith(name):
            return float(line.split()[-1])
    return 0.0


def _errors(log: str) -> dict[str, int]:
    lines = [line for line in log.splitlines() if '"level": "error"' in line]
    locked = sum("database is locked" in line for line in lines)
    overran = sum("took longer than" in line for line in lines)
    return {
        "database_locked": locked,
        "collector_overran": overran,
        "other": len(lines) - locked - overran,
    }


def _measure(demo: _Demo, window: float) -> dict[str, Any]:
    logged, skipped = len(demo.said()), _skipped(demo)
    cpu, load = processes.cpu_seconds(demo.child.pid), os.getloadavg()[0]
    began = time.monotonic()
    samples: list[Sample] = []
    while time.monotonic() - began < window:
        samples.append(_until(demo, lambda _s: True, WARM_SECONDS, "answer"))
        time.sleep(SAMPLE_SECONDS)
    samples.append(_until(demo, lambda _s: True, WARM_SECONDS, "answer"))
    elapsed = time.monotonic() - began
    figures = judge(
        samples,
        speed=demo.speed,
        gpus=GPUS[demo.preset],
        errors=_errors(demo.said()[logged:]),
        skipped=_skipped(demo) - skipped,
    )
    used = processes.cpu_seconds(demo.child.pid) - cpu
    figures["window_s"] = round(elapsed, 1)
    figures["cluster_minutes"] = round((samples[-1].now - samples[0].now) / 60, 1)
    figures["cpu_percent"] = round(100 * used / elapsed, 1)
    figures["loadavg"] = [round(load, 2), round(os.getloadavg()[0], 2)]
    return figures


def _stop(demo: _Demo) -> dict[str, Any]:
    """SIGINT, as Ctrl-C: seconds to exit, and whether the demo's files went."""
    stopping = time.monotonic()
    demo.child.send_signal(signal.SIGINT)
    code = demo.child.wait(STOP_WAIT_SECONDS)
    left = [p for p in demo.directory.iterdir() if p.name.startswith("lens-demo-")]
    return {"stop_s": round(time.monotonic() - stopping, 2), "exit": code, "files_left": bool(left)}


def trial(preset: str, speed: float, *, window: float | None = None) -> dict[str, Any]:
    """The demo of `preset` at `speed`, warmed up, measured over `window` real seconds (the
    definition's, window_seconds, unless given) and stopped."""
    demo = _start(preset, speed)
    try:
        figures: dict[str, Any] = {"speed": speed, "warm_s": _warm(demo)}
        figures.update(_measure(demo, window or window_seconds(speed)))
        figures.update(_stop(demo))
        return figures
    finally:
        if demo.child.poll() is None:
            demo.child.kill()
            demo.child.wait(10)
        shutil.rmtree(demo.directory, ignore_errors=True)


def highest(
    preset: str, ladder: tuple[float, ...], *, window: float | None = None
) -> dict[str, Any]:
    """The top of `ladder` tried first; then the speeds at or under the highest rate its clock
    ran at."""
    trials = [trial(preset, ladder[0], window=window)]
    if trials[0]["sustained"]:
        return {"highest_sustained": ladder[0], "trials": trials}
    reached = trials[0]["clock_rate_max"]
    candidates = [s for s in ladder[1:] if s <= reached] or [ladder[-1]]
    for speed in candidates[: MAX_TRIALS - 1]:
        trials.append(trial(preset, speed, window=window))
        if trials[-1]["sustained"]:
            return {"highest_sustained": speed, "trials": trials}
    return {"highest_sustained": None, "trials": trials}
