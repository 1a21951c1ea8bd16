"""The kernel's share of what `lens netflow` costs a connection, for bench/bench_netflow.py:
the time a connection of bench/netflow_loop.c takes (both ends on this node, one CPU) with
Lens's BPF programs attached and detached; unlike bpf_stats' run time it counts each
tracepoint's dispatch, and no clock reads of the stats (they are off). Both of the program's
attachments are measured: raw tracepoints at the kernel's BTF offsets (what `lens netflow` runs
where the kernel has BTF) and the ordinary tracepoints (where it has none)."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import statistics
import subprocess
from pathlib import Path
from typing import IO, Any

from lens.netflow import loader, socklayout

SOURCE = Path(__file__).with_name("netflow_loop.c")


def compile_loop(directory: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("bench netflow needs a C compiler (cc) for its connection loop")
    binary = directory / "netflow_loop"
    subprocess.run([compiler, "-O2", "-o", str(binary), str(SOURCE)], check=True)
    return binary


class RawRefused(Exception):
    """The raw program does not load here (the loader's reason)."""


class LensPrograms:
    """bpf/flows.c compiled once (as `lens netflow` compiles it, raw with a layout), attached
    or not."""

    def __init__(self, layout: socklayout.SockLayout | None) -> None:
        """Raises RawRefused when the raw program does not load here."""
        bcc = loader.import_bcc()
        flags = loader.compile_flags(65536, 65536)
        if layout is None:
            self._bpf: Any = bcc.BPF(text=loader.PROGRAM.read_bytes(), cflags=flags)
        else:
            self._bpf, why_not = loader.load_raw(bcc, flags + layout.cflags())
            if self._bpf is None:
                raise RawRefused(why_not)
        self._tracepoints = list(self._bpf.tracepoint_fds)  # b"sock:inet_sock_set_state"
        self._raw = list(self._bpf.raw_tracepoint_fds)  # b"sock_send_length"
        self._attached = True  # attached at load

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
        # bcc's own names for what it attached at load (tracepoint__<category>__<event>), and
        # the loader's for each raw tracepoint.
        for name in self._tracepoints:
            self._bpf.attach_tracepoint(
                tp=name, fn_name=b"tracepoint__" + name.replace(b":", b"__")
            )
        for name in self._raw:
            function = loader.RAW_FUNCTION.format(name.decode()).encode()
            self._bpf.attach_raw_tracepoint(tp=name, fn_name=function)

    def close(self) -> None:
        self._bpf.cleanup()


class Loop:
    """The connection loop, pinned to one CPU, asked for one round at a time."""

    def __init__(self, binary: Path) -> None:
        cpu = max(os.sched_getaffinity(0))
        self._process = subprocess.Popen(
            ["taskset", "-c", str(cpu), str(binary)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def round(self, connections: int) -> float:
        """Nanoseconds a connection took, over `connections`."""
        stdin, stdout = self._pipes()
        stdin.write(f"{connections}\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise SystemExit(f"the connection loop ended (exit {self._process.wait()})")
        return float(line)

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        assert self._process.stdin is not None and self._process.stdout is not None
        return self._process.stdin, self._process.stdout

    def close(self) -> None:
        self._pipes()[0].close()
        self._process.wait(timeout=60)


def measure(binary: Path, *, rounds: int, connections: int) -> dict[str, object]:
    """`rounds` rounds; in each, every attachment in turn (shuffled) is measured between two
    runs of `connections` without programs, and its cost is its run less their mean: the
    machine's drift (earlier rounds' TIME_WAIT sockets, other work, a virtual CPU's neighbours)
    cancels out of runs a few milliseconds apart, and many short rounds outweigh the odd one a
    neighbour slowed."""
    programs: dict[str, LensPrograms] = {}
    alone: list[float] = []
    added: dict[str, list[float]] = {}
    shuffle = random.Random(0)
    loop = Loop(binary)
    try:
        programs["tracepoint"] = LensPrograms(None)
        with contextlib.suppress(socklayout.LayoutError, RawRefused):  # then ordinary only
            programs["raw_tracepoint"] = LensPrograms(socklayout.read_layout())
        added = {name: [] for name in programs}
        for each in programs.values():
            each.detach()
        loop.round(min(connections * 4, 2000))  # warm: the listener's port and caches
        for _ in range(rounds):
            order = list(programs)
            shuffle.shuffle(order)
            for name in order:
                before = loop.round(connections)
                programs[name].attach()
                with_programs = loop.round(connections)
                programs[name].detach()
                after = loop.round(connections)
                alone += [before, after]
                added[name].append(with_programs - (before + after) / 2)
    finally:
        loop.close()
        for each in programs.values():
            each.close()
    return _figures(rounds, connections, alone, added)


def _figures(
    rounds: int, connections: int, alone: list[float], added: dict[str, list[float]]
) -> dict[str, object]:
    lens_runs = "raw_tracepoint" if "raw_tracepoint" in added else "tracepoint"
    figures: dict[str, object] = {
        "rounds": rounds,
        "connections_per_round": connections,
        "none_ns_per_connection_median": round(statistics.median(alone)),
        "lens_attachment": lens_runs,
    }
    for name, costs in added.items():
        prefix = "lens" if name == lens_runs else "ordinary_tracepoints"
        quartiles = statistics.quantiles(costs, n=4) if len(costs) > 1 else [costs[0]] * 3
        figures[f"{prefix}_added_ns_per_connection_median"] = round(statistics.median(costs))
        figures[f"{prefix}_added_ns_per_connection_quartiles"] = [
            round(quartiles[0]),
            round(quartiles[2]),
        ]
        # A connection's added time, 10,000 times a second, as a share of one core.
        figures[f"{prefix}_kernel_percent_of_one_core_at_10000_per_second"] = round(
            statistics.median(costs) * 10_000 / 1e9 * 100, 2
        )
    return figures
