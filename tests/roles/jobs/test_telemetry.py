"""`lens jobs`' telemetry intake over its HTTP port: remote write enriched from the store's rows
and forwarded, training logs into training_performance, and the routes off when not configured."""

from __future__ import annotations

import gzip
import http.client
import json
import queue
from collections.abc import Callable
from pathlib import Path

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lens.proto._generated.prometheus import remote_pb2
from lens.runtime.config import TelemetryConfig
from lens.store import database, models
from tests.telemetry.enrichment import labcluster
from tests.telemetry.remotewrite.target import Target

pytestmark = pytest.mark.slow_timeout
MEGATRON = (
    " [2026-05-01 12:00:01.482113] iteration      100/   10000 | consumed samples:         6400 |"
    " elapsed time per iteration (ms): 5123.4 | throughput per GPU (TFLOP/s/GPU): 487.2 |"
    " learning rate: 1.499250E-05 | global batch size:    64 | lm loss: 7.214836E+00 |"
    " loss scale: 1.0 | grad norm: 2.143 | number of skipped iterations:   0 |"
    " number of nan iterations:   0 |"
)


def _post(port: int, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _remote_write(*series: dict[str, str]) -> bytes:
    request = remote_pb2.WriteRequest()
    for labels in series:
        added = request.timeseries.add()
        for name, value in sorted(labels.items()):
            added.labels.add(name=name, value=value)
        added.samples.add(value=87.0, timestamp=1_777_636_801_000)
    return bytes(cramjam.snappy.compress_raw(request.SerializeToString()))


def _forwarded(target: Target) -> list[dict[str, str]]:
    try:
        _, raw = target.received.get(timeout=0.5)
    except queue.Empty:
        return []
    request = remote_pb2.WriteRequest.FromString(raw)
    return [{label.name: label.value for label in s.labels} for s in request.timeseries]


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_remote_write_is_enriched_from_the_store_and_forwarded(
    start_jobs: Callable[..., object], target: Target, eventually: Callable[..., None]
) -> None:
    running = start_jobs(
        telemetry=TelemetryConfig(remote_write_url=target.url, enrichment_refresh_seconds=0.5)
    )
    jobs = running.jobs  # type: ignore[attr-defined]
    with database.session(jobs.db):
        labcluster.build(jobs.db)
    port = jobs.process.http.port
    series = {
        "__name__": "DCGM_FI_DEV_GPU_UTIL",
        "gpu": "1",
        "UUID": labcluster.NVIDIA_UUIDS[1],
        "Hostname": "node-a",
    }
    headers = {"Content-Type": "application/x-protobuf", "Content-Encoding": "snappy"}
    forwarded: list[dict[str, str]] = []

    def enriched() -> bool:
        assert _post(port, "/api/v1/write", _remote_write(series), headers)[0] == 204
        forwarded[:] = _forwarded(target)
        return bool(forwarded) and "workload_uid" in forwarded[0]

    eventually(enriched, timeout=15)
    assert forwarded == [series | labcluster.TRAINER_0]
    status, body = _post(port, "/v1/prometheus", b"x", {"Content-Type": "text/plain"})
    assert status == 415
    assert "text/plain" in json.loads(body)["error"]


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_training_logs_become_rows_of_every_workload_of_the_pod(
    start_jobs: Callable[..., object], eventually: Callable[..., None]
) -> None:
    running = start_jobs(telemetry=TelemetryConfig())
    jobs = running.jobs  # type: ignore[attr-defined]
    with database.session(jobs.db):
        labcluster.build(jobs.db)
    record = {
        "date": 1777636801.482113,
        "log": MEGATRON,
        "kubernetes": {
            "pod_name": "trainer-0",
            "namespace_name": "ml",
            "pod_id": "uid-trainer-0",
            "host": "node-a",
            "container_name": "trainer",
        },
    }
    port = jobs.process.http.port
    status, body = _post(
        port, "/v1/logs", json.dumps([record]).encode(), {"Content-Type": "application/json"}
    )
    assert status == 200
    assert json.loads(body)["meta"] == {"code": 2000, "message": "OK"}

    def stored() -> list[tuple[str, int, int, float]]:
        table = models.TrainingPerformance
        with database.session(jobs.db):
            rows = table.select(
                table.workload_uid, table.serial, table.iteration, table.performance
            )
            return [(r.workload_uid, r.serial, r.iteration, r.performance["tflops"]) for r in rows]

    eventually(lambda: stored() != [], timeout=15)
    assert stored() == [("uid-llama", 1, 100, 487.2)]
    status, body = _post(port, "/v1/logs", b"[1, 2", {"Content-Type": "application/json"})
    assert status == 400
    assert json.loads(body)["meta"]["code"] == 4001


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_without_a_target_remote_write_is_not_served(start_jobs: Callable[..., object]) -> None:
    running = start_jobs()
    port = running.jobs.process.http.port  # type: ignore[attr-defined]
    assert _post(port, "/api/v1/write", b"", {"Content-Type": "application/x-protobuf"})[0] == 404


_HOSTILE_BODIES = (
    st.binary(max_size=300)
    | st.builds(lambda raw: bytes(cramjam.snappy.compress_raw(raw)), st.binary(max_size=300))
    | st.builds(lambda raw: gzip.compress(raw), st.binary(max_size=300))
    | st.builds(
        lambda value: json.dumps(value).encode(),
        st.recursive(
            st.none() | st.booleans() | st.floats() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(st.sampled_from(["log", "kubernetes", "date", "pod_id"]), inner)
            ),
            max_leaves=12,
        ),
    )
)

_CONTENT_TYPES = [
    "",
    "application/json",
    "application/x-protobuf",
    "application/x-protobuf;proto=io.prometheus.write.v2.Request",
    "text/plain; charset=\x7f",
]


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_hostile_bodies_never_crash_the_server_nor_lose_stored_rows(
    start_jobs: Callable[..., object], target: Target, eventually: Callable[..., None]
) -> None:
    running = start_jobs(telemetry=TelemetryConfig(remote_write_url=target.url))
    jobs = running.jobs  # type: ignore[attr-defined]
    with database.session(jobs.db):
        labcluster.build(jobs.db)
    port = jobs.process.http.port
    record = {"date": 1777636801.5, "log": MEGATRON, "kubernetes": {"pod_id": "uid-trainer-0"}}
    assert _post(port, "/v1/logs", json.dumps([record]).encode(), {})[0] == 200

    def rows() -> int:
        with database.session(jobs.db):
            return int(models.TrainingPerformance.select().count())

    eventually(lambda: rows() == 1, timeout=15)

    @settings(max_examples=150, deadline=None)
    @given(
        path=st.sampled_from(["/v1/logs", "/api/v1/write", "/v1/prometheus"]),
        body=_HOSTILE_BODIES,
        content_type=st.sampled_from(_CONTENT_TYPES),
        encoding=st.sampled_from(["", "gzip", "snappy", "br", "gzip, gzip"]),
    )
    def post_anything(path: str, body: bytes, content_type: str, encoding: str) -> None:
        headers = {"Content-Type": content_type, "Content-Encoding": encoding}
        status, _ = _post(port, path, body, {k: v for k, v in headers.items() if v})
        assert status in {200, 204, 400, 415, 503}, (path, status)

    post_anything()
    assert rows() == 1, "nothing stored was lost or doubled"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request("GET", "/healthz")
    assert connection.getresponse().status == 200
    connection.close()


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_with_a_token_file_every_intake_route_asks_for_the_token(
    start_jobs: Callable[..., object], target: Target, tmp_path: Path
) -> None:
    token = tmp_path / "intake-token"
    token.write_text("s3cret\n")
    running = start_jobs(
        telemetry=TelemetryConfig(remote_write_url=target.url, token_file=str(token))
    )
    port = running.jobs.process.http.port  # type: ignore[attr-defined]
    for path in ("/v1/logs", "/api/v1/write", "/v1/prometheus"):
        status, body = _post(port, path, b"[]", {"Authorization": "Bearer wrong"})
        assert (status, json.loads(body)) == (401, {"error": "a bearer token is required"})
    assert _post(port, "/v1/logs", b"[]", {"Authorization": "Bearer s3cret"})[0] == 200
    token.write_text("rotated\n")
    assert _post(port, "/v1/logs", b"[]", {"Authorization": "Bearer rotated"})[0] == 200
