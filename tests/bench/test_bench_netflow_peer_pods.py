from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_peer_pods_cache_holds_less_per_pod_than_whole_pods() -> None:
    # A process of its own: tracemalloc counts every thread's allocations, and a test worker
    # has other tests' threads allocating meanwhile.
    result = subprocess.run(
        [sys.executable, "-m", "bench", "netflow_peer_pods", "--pods", "2000"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["pods"] == 2000 and figures["pod_json_bytes"] > 1000
    cut, whole = figures["peer_pods_bytes_per_pod"], figures["baseline_whole_bytes_per_pod"]
    # The naming fields and the index hold well under half of what whole pods do.
    assert 0 < cut < whole / 2
