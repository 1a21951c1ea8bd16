from __future__ import annotations

from pathlib import Path

import pytest

from bench import remotewrite_load, telemetry_index, telemetry_latency
from lens.telemetry.enrichment.relabeling import WorkloadRelabeler
from tests.bench.benchrun import bench_figures

pytestmark = pytest.mark.slow_timeout


def test_the_index_holds_half_the_corpus_gpus_by_their_own_labels() -> None:
    corpus = remotewrite_load.build_corpus(nodes=4, gpus=4, scrapes=1)
    series = list(remotewrite_load.gpu_series(corpus))
    relabeler = WorkloadRelabeler(telemetry_index.index_of(series), telemetry_index.SETTINGS)
    enriched = {}
    for labels in series:
        found = dict(labels)
        answer = relabeler.relabel(labels)
        gpu = int(found.get("gpu") or found["gpu_id"])
        node = found.get("Hostname") or found["hostname"]
        assert (answer is not None) == (gpu % 2 == 0), labels
        if answer is not None:
            enriched[(node, gpu)] = dict(answer)["workload_name"]
    assert enriched == {
        (f"gpu-node-{n:03d}", g): f"llama-gpu-node-{n:03d}" for n in range(4) for g in (0, 2)
    }


def test_every_iteration_line_is_stored_once_and_its_latency_measured(tmp_path: Path) -> None:
    figures = telemetry_latency.measure(f"sqlite:///{tmp_path}/b.db", seconds=1.0, pods=4)
    assert figures.rows_stored == figures.iterations == 4 * 10
    assert figures.lines == 4 * figures.iterations
    assert 0 < figures.p50_seconds <= figures.p99_seconds <= figures.max_seconds


def test_the_benchmark_prints_one_json_object_with_its_three_parts() -> None:
    argv = ["--nodes", "4", "--scrapes", "1", "--rounds", "1", "--lines", "2000"]
    argv += ["--seconds", "1", "--pods", "2", "--engine", "sqlite"]
    figures = bench_figures("telemetry", *argv, timeout=120)
    assert figures["remote_write"]["same_bodies"] is True
    assert figures["remote_write"]["relabelled_share"] == 0.5
    assert figures["log_parsing"]["lines"] >= 2000
    assert figures["log_latency"]["rows_stored"] == figures["log_latency"]["iterations"] == 20
