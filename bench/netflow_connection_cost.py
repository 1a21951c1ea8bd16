"""The kernel's share of what `lens netflow` costs a connection, for bench/bench_netflow.py:
the time a connection of bench/netflow_loop.c takes (both ends on this node, one CPU) with
Lens's BPF programs attached and detached, in short paired rounds; unlike bpf_stats' run time
it counts each tracepoint's dispatch, and no clock reads of the stats (they are off)."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
from pathlib import Path
from typing import Any

from lens.netflow import loader

SOURCE = Path(__file__).with_name("netflow_loop.c")


def compile_loop(directory: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("bench netflow needs a C compiler (cc) for its connection loop")
    binary = directory / "netflow_loop"
    subprocess.run([compiler, "-O2", "-o", str(binary), str(SOURCE)], check=True)
    return binary


class LensPrograms:
    """bpf/flows.c compiled once (as `lens netflow` compiles it), attached or not."""

    def __init__(self) -> None:
        bcc = loader.import_bcc()
        self._bpf: Any = bcc.BPF(
            text=loader.PROGRAM.read_bytes(), cflags=loader.compile_flags(65536, 65536)
        )
        self._tracepoints = list(self._bpf.tracepoint_fds)  # b"sock:inet_sock_set_state"
        self._raw = list(self._bpf.raw_tracepoint_fds)  # raw ones (b"sock_send_length"), if any
        self._attached = True  # bcc attaches at load

    def detach(self) -> None:
        if not self._attached:
            return
        self._attached = False
        for name in self._tracepoints:
            self._bpf.detach_tracepoint(name)
        for name in self._raw:
            self._bpf.detach_raw_tracepoint(name)

    def attach(self) -> None:
        if self._attached:
            return
        self._attached = True
        # bcc's own names for what it attached at load: tracepoint__<category>__<event> and
        # raw_tracepoint__<event>.
        for name in self._tracepoints:
            self._bpf.attach_tracepoint(
                tp=name, fn_name=b"tracepoint__" + name.replace(b":", b"__")
            )
        for name in self._raw:
            self._bpf.attach_raw_tracepoint(tp=name, fn_name=b"raw_tracepoint__" + name)

    def close(self) -> None:
        self._bpf.cleanup()


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


def measure(binary: Path, *, rounds: int, connections: int) -> dict[str, object]:
    """`rounds` pairs of `connections` each: without Lens's programs, then with them."""
    cpu = max(os.sched_getaffinity(0))
    _loop(binary, min(connections, 2000), cpu)  # warm: the listener's port and caches
    programs = LensPrograms()
    alone: list[float] = []
    observed: list[float] = []
    # The programs are compiled once, so rounds can be short and each with them paired with
    # one beside it: the machine's drift (earlier rounds' TIME_WAIT sockets, other work, a
    # virtual CPU's neighbours) cancels out of the pairs, and every other pair runs in the
    # other order, so a steady drift does not either.
    try:
        for pair in range(rounds):
            for attached in (False, True) if pair % 2 == 0 else (True, False):
                (programs.attach if attached else programs.detach)()
                (observed if attached else alone).append(_loop(binary, connections, cpu))
    finally:
        programs.close()
    added = [with_lens - without for with_lens, without in zip(observed, alone, strict=True)]
    quartiles = statistics.quantiles(added, n=4) if len(added) > 1 else [added[0]] * 3
    return {
        "rounds": rounds,
        "connections_per_round": connections,
        "none_ns_per_connection_median": round(statistics.median(alone)),
        "lens_added_ns_per_connection_median": round(statistics.median(added)),
        "lens_added_ns_per_connection_quartiles": [round(quartiles[0]), round(quartiles[2])],
        # A connection's added time, 10,000 times a second, as a share of one core.
        "lens_kernel_percent_of_one_core_at_10000_per_second": round(
            statistics.median(added) * 10_000 / 1e9 * 100, 2
        ),
    }
