from __future__ import annotations

import asyncio
from collections.abc import Iterator

import cramjam
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.proto._generated.io.prometheus.write.v2 import types_pb2 as v2_pb2
from lens.proto._generated.prometheus import remote_pb2
from lens.runtime.httpserver import Request, Response
from lens.runtime.selfmetrics import SelfMetrics
from lens.telemetry.remotewrite.forwarding import Forwarder, ForwardMetrics, ForwardSettings
from lens.telemetry.remotewrite.protocol import CONTENT_TYPE_V2, Version
from lens.telemetry.remotewrite.receiving import Receiver, ReceiverMetrics
from lens.telemetry.remotewrite.rewriting import Rewriter
from tests.telemetry.remotewrite.reference import WORKLOAD, GpuRelabeler
from tests.telemetry.remotewrite.target import Target

TS = 1_787_486_401_482


class Running:
    def __init__(self, url: str, *, queue_requests: int = 16) -> None:
        self.metrics = SelfMetrics(process=False)
        self.forwarder = Forwarder(
            ForwardSettings(url=url, queue_requests=queue_requests),
            metrics=ForwardMetrics(self.metrics),
        )
        self.receiver = Receiver(
            rewriter=Rewriter(GpuRelabeler()),
            forwarder=self.forwarder,
            forward_as=Version.V1,
            metrics=ReceiverMetrics(self.metrics),
            max_bytes=1 << 20,
        )

    def post(self, body: bytes, content_type: str | None = "application/x-protobuf") -> Response:
        headers = {"Content-Encoding": "snappy"}
        if content_type is not None:
            headers["Content-Type"] = content_type
        return self.receiver(
            Request(path="/api/v1/write", query={}, headers=headers, method="POST", body=body)
        )

    def value(self, name: str, **labels: str) -> float:
        return self.metrics.registry.get_sample_value(name, labels) or 0.0


@pytest.fixture
def running(target: Target) -> Iterator[Running]:
    started = Running(target.url)
    asyncio.run(started.forwarder.start())
    yield started
    asyncio.run(started.forwarder.stop())


def _snappy(raw: bytes) -> bytes:
    return bytes(cramjam.snappy.compress_raw(raw))


def _v1(*series: dict[str, str]) -> bytes:
    request = remote_pb2.WriteRequest()
    for labels in series:
        added = request.timeseries.add()
        for name, value in sorted(labels.items()):
            added.labels.add(name=name, value=value)
        added.samples.add(value=42.0, timestamp=TS)
    return _snappy(request.SerializeToString())


def _forwarded(target: Target) -> list[dict[str, str]]:
    _, raw = target.received.get(timeout=5)
    request = remote_pb2.WriteRequest.FromString(raw)
    return [{label.name: label.value for label in s.labels} for s in request.timeseries]


def test_a_1_0_request_is_answered_204_and_forwarded_with_workload_labels(
    running: Running, target: Target
) -> None:
    gpu = {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", "Hostname": "n1"}
    other = {"__name__": "up", "job": "x"}
    answer = running.post(_v1(gpu, other))
    assert (answer.status, answer.body) == (204, b"")
    assert "X-Prometheus-Remote-Write-Samples-Written" not in answer.headers
    assert _forwarded(target) == [gpu | dict(WORKLOAD), other]
    assert running.value("lens_remote_write_received_samples_total", protocol="1.0") == 2
    assert running.value("lens_remote_write_received_series_total", enriched="true") == 1
    assert running.value("lens_remote_write_received_series_total", enriched="false") == 1


def test_a_2_0_request_is_answered_with_the_counts_it_asks_for(
    running: Running, target: Target
) -> None:
    request = v2_pb2.Request(
        symbols=["", "__name__", "gpu_power", "gpu", "3"],
        timeseries=[
            v2_pb2.TimeSeries(
                labels_refs=[1, 2, 3, 4],
                samples=[v2_pb2.Sample(value=1.0, timestamp=TS), v2_pb2.Sample(value=2.0)],
            )
        ],
    )
    answer = running.post(_snappy(request.SerializeToString()), CONTENT_TYPE_V2)
    assert answer.status == 204
    assert answer.headers["X-Prometheus-Remote-Write-Samples-Written"] == "2"
    assert answer.headers["X-Prometheus-Remote-Write-Histograms-Written"] == "0"
    assert answer.headers["X-Prometheus-Remote-Write-Exemplars-Written"] == "0"
    assert _forwarded(target) == [{"__name__": "gpu_power", "gpu": "3"} | dict(WORKLOAD)]


def test_an_unknown_type_is_415_and_a_bad_body_400_each_saying_why(running: Running) -> None:
    answer = running.post(_v1({"__name__": "x"}), "application/json")
    assert answer.status == 415
    assert b"application/json" in answer.body
    answer = running.post(b"\xff\x00garbage")
    assert answer.status == 400
    assert b"error" in answer.body
    assert running.value("lens_remote_write_refused_requests_total", reason="unsupported") == 1
    assert running.value("lens_remote_write_refused_requests_total", reason="bad_request") == 1


def test_a_full_forwarding_queue_is_503_with_retry_after() -> None:
    unstarted = Running("http://127.0.0.1:9/write", queue_requests=1)
    assert unstarted.post(_v1({"__name__": "a"})).status == 204
    answer = unstarted.post(_v1({"__name__": "b"}))
    assert (answer.status, answer.headers["Retry-After"]) == (503, "5")
    assert unstarted.value("lens_remote_write_refused_requests_total", reason="queue_full") == 1
    assert unstarted.value("lens_remote_write_received_samples_total", protocol="1.0") == 1


@given(
    body=st.binary(max_size=200),
    content_type=st.sampled_from(
        [None, "application/x-protobuf", CONTENT_TYPE_V2, "text/plain", "x;proto=", ";;"]
    ),
)
def test_any_body_is_answered_204_400_415_or_503(body: bytes, content_type: str | None) -> None:
    unstarted = Running("http://127.0.0.1:9/write", queue_requests=1_000_000)
    for raw in (body, _snappy(body)):
        assert unstarted.post(raw, content_type).status in {204, 400, 415, 503}


def test_a_request_of_metadata_alone_is_forwarded(running: Running, target: Target) -> None:
    request = remote_pb2.WriteRequest()
    request.metadata.add(type=2, metric_family_name="DCGM_FI_DEV_GPU_UTIL", help="GPU use.")
    assert running.post(_snappy(request.SerializeToString())).status == 204
    _, raw = target.received.get(timeout=5)
    (metadata,) = remote_pb2.WriteRequest.FromString(raw).metadata
    assert (metadata.metric_family_name, metadata.help) == ("DCGM_FI_DEV_GPU_UTIL", "GPU use.")
