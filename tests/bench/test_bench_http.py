from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ASGI_SERVERS = ("uvicorn_h11", "fastapi_async")


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench", "http", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )


@pytest.mark.slow_timeout
def test_the_http_benchmark_prints_each_servers_figures_and_ratios() -> None:
    servers = ("stdlib", *ASGI_SERVERS)
    result = _bench(
        "--requests", "40", "--warmup", "5", "--seconds", "0.3", "--repeat", "1",
        "--body", "synthetic", "--body-kib", "8", "--servers", ",".join(servers),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["benchmark"] == "http"
    assert figures["body_bytes"] >= 8 * 1024 and figures["body_samples"] > 0
    stdlib = figures["stdlib"]
    for kind in servers:
        entry = figures[kind]
        if "skipped" in entry:  # uvicorn or fastapi is not installed here
            assert kind != "stdlib" and "not installed" in entry["skipped"]
            assert f"{kind} not measured" in result.stderr
            continue
        assert (entry["runs"], entry["requests"]) == (1, 40)
        assert entry["scrape_1hz_scrapes"] == 1
        for key in ("cpu_us_per_request", "requests_per_s", "p50_ms", "rss_mib", "peak_rss_mib"):
            assert entry[key] > 0, key
        assert entry["p50_ms"] <= entry["p99_ms"]
        assert entry["idle_cpu_percent_of_one_core"] >= 0
        if kind != "stdlib":
            ratios = entry["ratio_to_stdlib"]
            expected = entry["requests_per_s"] / stdlib["requests_per_s"]
            assert ratios["requests_per_s"] == pytest.approx(expected, abs=0.01)


@pytest.mark.slow_timeout
def test_without_uvicorn_only_the_stdlib_server_is_measured() -> None:
    hide_uvicorn = (
        "import sys; sys.modules['uvicorn'] = None; from bench.__main__ import main; "
        "sys.exit(main(sys.argv[1:]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", hide_uvicorn, "http", "--requests", "5", "--warmup", "1",
         "--repeat", "1", "--seconds", "0.1", "--body", "synthetic", "--body-kib", "4"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "uvicorn_h11 not measured: uvicorn is not installed" in result.stderr
    figures = json.loads(result.stdout)
    assert figures["stdlib"]["requests"] == 5
    assert "not installed" in figures["fastapi"]["skipped"]


@pytest.mark.slow_timeout
def test_an_unknown_server_kind_is_refused() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench.http_servers", "nginx", "0", "/dev/null"],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
    )
    assert result.returncode == 2
    assert "unknown server kind 'nginx'" in result.stderr
