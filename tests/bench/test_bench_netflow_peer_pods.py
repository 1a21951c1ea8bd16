from __future__ import annotations

from tests.bench.benchrun import bench_figures


def test_the_peer_pods_cache_holds_less_per_pod_than_whole_pods() -> None:
    # bench_figures runs it in a process of its own: tracemalloc counts every thread's
    # allocations, and a test worker has other tests' threads allocating meanwhile.
    figures = bench_figures("netflow_peer_pods", "--pods", "2000", timeout=60)
    assert figures["pods"] == 2000 and figures["pod_json_bytes"] > 1000
    cut, whole = figures["peer_pods_bytes_per_pod"], figures["baseline_whole_bytes_per_pod"]
    # The naming fields and the index hold well under half of what whole pods do.
    assert 0 < cut < whole / 2
