"""JuiceFS figures from a Prometheus-compatible query API: a real Prometheus scraping JuiceFS
exposition text, its error answers, and the parser on anything at all."""

from __future__ import annotations

import http.server
import json
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime import errors
from lens.runtime.config import MetricsConfig
from lens.storage import usage
from lens.storage.usage import PrometheusQueries, Sample, VolumeUsage

# What two JuiceFS mount pods of volume "datasets" and one of "ckpt" expose (JuiceFS names
# these gauges without a unit suffix; `mp` is the mount point).
JUICEFS_EXPOSITION = """\
# TYPE juicefs_used_space gauge
juicefs_used_space{mp="/jfs/a",vol_name="datasets"} 1000
juicefs_used_space{mp="/jfs/b",vol_name="datasets"} 3000
juicefs_used_space{mp="/jfs/c",vol_name="ckpt"} 5e+12
# TYPE juicefs_total_space gauge
juicefs_total_space{mp="/jfs/a",vol_name="datasets"} 1.099511627776e+12
juicefs_total_space{mp="/jfs/b",vol_name="datasets"} 1.099511627776e+12
# TYPE juicefs_used_inodes gauge
juicefs_used_inodes{mp="/jfs/a",vol_name="datasets"} 42
juicefs_used_inodes{mp="/jfs/b",vol_name="datasets"} 42
# TYPE juicefs_total_inodes gauge
juicefs_total_inodes{mp="/jfs/c",vol_name="ckpt"} 1e+09
# TYPE juicefs_fuse_read_size_bytes_sum counter
juicefs_fuse_read_size_bytes_sum{mp="/jfs/a",vol_name="datasets"} 7
"""


class _Serving:
    """A tiny HTTP server answering every GET with one status and body."""

    def __init__(self, status: int, body: bytes, content_type: str) -> None:
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(outer.status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                """Quiet."""

        self.status = status
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[..., _Serving]]:
    started: list[_Serving] = []

    def start(status: int, body: bytes, content_type: str = "application/json") -> _Serving:
        server = _Serving(status, body, content_type)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def _prometheus(directory: Path, *, port: int, target: str) -> subprocess.Popen[bytes]:
    config = directory / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
        "scrape_configs:\n"
        f"  - job_name: juicefs\n    static_configs: [{{targets: ['{target}']}}]\n"
    )
    return subprocess.Popen(
        [
            "/usr/bin/prometheus",
            f"--config.file={config}",
            f"--storage.tsdb.path={directory / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _scraped(url: str) -> bool:
    address = f"{url}/api/v1/query?query=up"
    try:
        with urllib.request.urlopen(address, timeout=2) as answer:
            result = json.load(answer)["data"]["result"]
    except (urllib.error.URLError, ConnectionError, KeyError):
        return False
    return bool(result) and result[0]["value"][1] == "1"


@pytest.mark.slow_timeout
def test_a_real_prometheus_gives_each_volumes_figures(
    tmp_path: Path,
    free_port: Callable[[], int],
    serve: Callable[..., _Serving],
    eventually: Callable[..., None],
) -> None:
    exporter = serve(200, JUICEFS_EXPOSITION.encode(), "text/plain; version=0.0.4")
    port = free_port()
    prometheus = _prometheus(tmp_path, port=port, target=f"127.0.0.1:{exporter.port}")
    try:
        url = f"http://127.0.0.1:{port}"
        eventually(lambda: _scraped(url), timeout=30)
        queries = PrometheusQueries(MetricsConfig(prometheus_url=url + "/"))
        figures = usage.read_juicefs_usage(queries)
    finally:
        prometheus.terminate()
        prometheus.wait(15)
    assert figures == {
        # The mount pods' figures averaged, as the original's API did.
        "datasets": VolumeUsage(
            capacity_bytes=1_099_511_627_776, used_bytes=2000, total_inodes=None, used_inodes=42
        ),
        "ckpt": VolumeUsage(used_bytes=5_000_000_000_000, total_inodes=1_000_000_000),
    }


def test_the_apis_own_error_is_said(serve: Callable[..., _Serving]) -> None:
    answer = {"status": "error", "errorType": "bad_data", "error": "parse error at char 3"}
    server = serve(400, json.dumps(answer).encode())
    queries = PrometheusQueries(MetricsConfig(prometheus_url=server.url))
    with pytest.raises(errors.SourceError, match="HTTP 400 Bad Request: query failed: bad_data"):
        queries.query("up")
    with pytest.raises(errors.SourceError, match=r"no JSON object|malformed JSON"):
        PrometheusQueries(MetricsConfig(prometheus_url=serve(200, b"<html>").url)).query("up")


def test_an_api_not_answering_is_a_source_error(free_port: Callable[[], int]) -> None:
    config = MetricsConfig(prometheus_url=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(errors.SourceError, match="query API"):
        PrometheusQueries(config).query("up")
    with pytest.raises(errors.NoDataError):
        PrometheusQueries(MetricsConfig())


def test_an_answer_parses_into_samples() -> None:
    body = (
        b'{"status":"success","data":{"resultType":"vector","result":['
        b'{"metric":{"__name__":"juicefs_used_space","vol_name":"v"},"value":[1.5,"12"]},'
        b'{"metric":{},"value":[1.5,"NaN"]}]}}'
    )
    samples = usage.parse_query_answer(body)
    assert samples[0] == Sample(
        labels={"__name__": "juicefs_used_space", "vol_name": "v"}, value=12
    )
    assert samples[1].labels == {}
    scalar = b'{"status":"success","data":{"resultType":"scalar","result":[1,"2"]}}'
    with pytest.raises(errors.SourceError, match="no instant vector"):
        usage.parse_query_answer(scalar)
    with pytest.raises(errors.SourceError, match="sample 0: value 'x' is no number"):
        usage.parse_query_answer(
            b'{"status":"success","data":{"resultType":"vector","result":'
            b'[{"metric":{},"value":[1,"x"]}]}}'
        )


def test_values_that_are_no_count_stay_absent() -> None:
    def sample(name: str, value: float, volume: str = "v") -> Sample:
        return Sample(labels={"__name__": name, "vol_name": volume}, value=value)

    figures = usage.juicefs_usage(
        [
            sample("juicefs_used_space", float("nan")),
            sample("juicefs_total_space", -1),
            sample("juicefs_used_inodes", 2.0**64),
            sample("juicefs_total_inodes", 7.4),
            sample("juicefs_used_space", 1, volume=""),  # no volume: no one's figure
            sample("juicefs_fuse_read_size_bytes_sum", 9),
        ]
    )
    assert figures == {"v": VolumeUsage(total_inodes=7)}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
SAMPLES = st.builds(
    lambda metric, value: {"metric": metric, "value": value},
    st.dictionaries(st.sampled_from(["__name__", "vol_name", "mp"]), JSON, max_size=3),
    st.lists(st.text(max_size=6) | JSON, max_size=3),
)
ANSWERS = st.builds(
    lambda status, kind, result: {"status": status, "data": {"resultType": kind, "result": result}},
    st.sampled_from(["success", "error"]) | JSON,
    st.sampled_from(["vector", "matrix"]) | JSON,
    st.lists(SAMPLES | JSON, max_size=3) | JSON,
)


@given(body=st.binary(max_size=64) | ANSWERS.map(lambda a: json.dumps(a).encode()))
def test_any_answer_is_samples_or_a_source_error(body: bytes) -> None:
    try:
        samples = usage.parse_query_answer(body)
    except errors.SourceError:
        return
    for figures in usage.juicefs_usage(samples).values():
        counts = [figures.capacity_bytes, figures.used_bytes, figures.total_inodes]
        assert all(c is None or 0 <= c < 2**63 for c in [*counts, figures.used_inodes])
