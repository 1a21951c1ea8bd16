"""`lens jobs`' telemetry intake, in one run (issue 21's benchmark):

1. **Remote write**: decompress, decode, enrich and re-encode Prometheus 1.0 requests of 2,000
   one-sample series of dcgm-exporter and AMD device-metrics-exporter GPUs
   (bench/remotewrite_load.py), with the real WorkloadRelabeler over an index in which half the
   GPUs are held (bench/telemetry_index.py), in samples/s per core (process CPU time), against
   a straightforward decode of the same requests with the protobuf message classes.
2. **Log parsing**: lines/s per core of parse_line over a mixed corpus of every framework's
   iteration lines among their jobs' chatter (bench/trainlog_load.py).
3. **Log latency**: a line's time from its arrival at the intake to its row committed, p50 and
   p99, at a steady load on a fresh database (bench/telemetry_latency.py).

Budgets: ≥ 300,000 samples/s per core; ≥ 200,000 lines/s per core; p99 ≤ 2 s.
"""

from __future__ import annotations

import argparse
import dataclasses

from bench import databases, remotewrite_load, telemetry_index, telemetry_latency, trainlog_load
from lens.telemetry.enrichment.relabeling import WorkloadRelabeler

SAMPLES_BUDGET = 300_000
LINES_BUDGET = 200_000
P99_BUDGET_SECONDS = 2.0


def remote_write(*, nodes: int, scrapes: int, rounds: int) -> dict[str, object]:
    corpus = remotewrite_load.build_corpus(nodes=nodes, scrapes=scrapes)
    index = telemetry_index.index_of(list(remotewrite_load.gpu_series(corpus)))
    relabeler = WorkloadRelabeler(index, telemetry_index.SETTINGS)
    figures = remotewrite_load.measure(relabeler, corpus, rounds=rounds)
    found = dataclasses.asdict(figures)
    found["budget_samples_per_second"] = SAMPLES_BUDGET
    found["met"] = figures.lens_samples_per_second >= SAMPLES_BUDGET and figures.same_bodies
    return found


def log_parsing(*, lines: int, repeat: int) -> dict[str, object]:
    figures = trainlog_load.measure(trainlog_load.build_corpus(lines), repeat=repeat)
    found = figures.as_dict()
    found["budget_lines_per_second"] = LINES_BUDGET
    found["met"] = figures.lines_per_second >= LINES_BUDGET
    return found


def log_latency(*, engine: str, seconds: float, pods: int) -> dict[str, object]:
    with databases.fresh_database_url(engine) as url:
        figures = telemetry_latency.measure(url, seconds=seconds, pods=pods)
    found: dict[str, object] = {"engine": engine, **dataclasses.asdict(figures)}
    found["budget_p99_seconds"] = P99_BUDGET_SECONDS
    found["met"] = (
        figures.p99_seconds <= P99_BUDGET_SECONDS and figures.rows_stored == figures.iterations
    )
    return found


def run(argv: list[str]) -> dict[str, object]:
    parser = argparse.ArgumentParser(prog="python -m bench telemetry")
    parser.add_argument("--nodes", type=int, default=64, help="GPU nodes of 8 GPUs (default 64)")
    parser.add_argument("--scrapes", type=int, default=3, help="scrapes in the corpus")
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over the corpus")
    parser.add_argument("--lines", type=int, default=100_000, help="log lines in the corpus")
    parser.add_argument("--seconds", type=float, default=20.0, help="latency run length")
    parser.add_argument("--pods", type=int, default=64, help="pods logging in the latency run")
    parser.add_argument("--engine", default="postgresql", help="sqlite or postgresql")
    args = parser.parse_args(argv)
    return {
        "remote_write": remote_write(nodes=args.nodes, scrapes=args.scrapes, rounds=args.rounds),
        "log_parsing": log_parsing(lines=args.lines, repeat=args.rounds),
        "log_latency": log_latency(engine=args.engine, seconds=args.seconds, pods=args.pods),
    }
