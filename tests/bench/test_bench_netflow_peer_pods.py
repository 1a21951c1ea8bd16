from __future__ import annotations

from bench import bench_netflow_peer_pods


def test_the_peer_pods_cache_holds_less_per_pod_than_whole_pods() -> None:
    figures = bench_netflow_peer_pods.run(["--pods", "500"])
    assert figures["pods"] == 500 and figures["pod_json_bytes"] > 1000
    cut, whole = figures["peer_pods_bytes_per_pod"], figures["baseline_whole_bytes_per_pod"]
    # The naming fields and the index hold well under half of what whole pods do.
    assert 0 < cut < whole / 2  # type: ignore[operator]
