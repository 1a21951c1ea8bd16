"""How long `lens --help` takes in a fresh interpreter: what a person waits for at every command.

Each run is a new `python -m lens --help` (stdout discarded); the figure is the median wall time
of `--runs` runs. The baseline in the same run is the floor every typer command pays: a fresh
interpreter importing typer and rich. With `--reference DIR`, the same command is timed from
another checkout of Lens (an earlier commit, `git worktree add DIR REV`) in the same run,
interleaved, so the ratio compares them on equal terms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FLOOR = "import typer, rich.console"


def _time(command: list[str], *, tree: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    subprocess.run(command, cwd=tree, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 1)


def run(argv: list[str]) -> dict[str, object]:
    parser = argparse.ArgumentParser(prog="python -m bench cli")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--reference", help="another checkout of Lens to time the same way")
    args = parser.parse_args(argv)
    help_command = [sys.executable, "-m", "lens", "--help"]
    floor_command = [sys.executable, "-c", FLOOR]
    reference = Path(args.reference).resolve() if args.reference else None
    lens, floor, earlier = [], [], []
    for _ in range(args.runs):
        lens.append(_time(help_command, tree=REPO))
        floor.append(_time(floor_command, tree=REPO))
        if reference is not None:
            earlier.append(_time(help_command, tree=reference))
    figures: dict[str, object] = {
        "runs": args.runs,
        "lens_help_ms": _median_ms(lens),
        "floor_ms": _median_ms(floor),
        "over_floor_ratio": round(statistics.median(lens) / statistics.median(floor), 2),
    }
    if reference is not None:
        figures["reference"] = str(reference)
        figures["reference_help_ms"] = _median_ms(earlier)
        figures["vs_reference_ratio"] = round(
            statistics.median(lens) / statistics.median(earlier), 3
        )
    return figures
