"""The kernel's share of what `lens netflow` costs a connection, for the netflow benchmark: the
time a connection takes (bench/netflow_loop.c, both of its ends on this node, pinned to one
CPU) with Lens's BPF programs attached against none, in alternating rounds.

Why a second measure: bpf_stats' run time counts only the programs' own runs (plus its clock
reads), not the tracepoints' dispatch around each run (the arguments written into a record for
the program); a connection's added time counts both, and nothing else. It is taken with
kernel.bpf_stats_enabled off.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path

from lens.netflow import loader

SOURCE = Path(__file__).with_name("netflow_loop.c")


def compile_loop(directory: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("bench netflow needs a C compiler (cc) for its connection loop")
    binary = directory / "netflow_loop"
    subprocess.run([compiler, "-O2", "-o", str(binary), str(SOURCE)], check=True)
    return binary


def _loop(binary: Path, connections: int, cpu: int) -> float:
    """Nanoseconds a connection took, over `connections`."""
    result = subprocess.run(
        ["taskset", "-c", str(cpu), str(binary), str(connections)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return float(result.stdout)


def _with_lens(run: Callable[[], float]) -> float:
    flows = loader.EbpfFlows()
    try:
        return run()
    finally:
        flows.close()


def measure(binary: Path, *, rounds: int, connections: int) -> dict[str, object]:
    """`rounds` alternating pairs (none, then Lens's programs) of `connections` each."""
    cpu = max(os.sched_getaffinity(0))
    _loop(binary, min(connections, 2000), cpu)  # warm: the listener's port and caches
    alone: list[float] = []
    observed: list[float] = []
    for _ in range(rounds):
        alone.append(_loop(binary, connections, cpu))
        observed.append(_with_lens(lambda: _loop(binary, connections, cpu)))
    added_median = statistics.median(observed) - statistics.median(alone)
    added_least = min(observed) - min(alone)
    return {
        "rounds": rounds,
        "connections_per_round": connections,
        "none_ns_per_connection": [round(value) for value in alone],
        "lens_ns_per_connection": [round(value) for value in observed],
        "lens_added_ns_per_connection_median": round(added_median),
        "lens_added_ns_per_connection_least": round(added_least),
        # A connection's added time, 10,000 times a second, as a share of one core.
        "lens_kernel_percent_of_one_core_at_10000_per_second": round(
            added_median * 10_000 / 1e9 * 100, 2
        ),
    }
