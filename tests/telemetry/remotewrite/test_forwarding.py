from __future__ import annotations

import asyncio
import threading

from lens.proto._generated.prometheus import remote_pb2
from lens.runtime.selfmetrics import SelfMetrics
from lens.telemetry.remotewrite.forwarding import Forwarder, ForwardMetrics, ForwardSettings
from lens.telemetry.remotewrite.protocol import Version
from tests.telemetry.remotewrite.target import Target


def _request(*names: str) -> bytes:
    request = remote_pb2.WriteRequest()
    for name in names:
        series = request.timeseries.add()
        series.labels.add(name="__name__", value=name)
        series.samples.add(value=1.5, timestamp=1_787_486_401_482)
    return request.SerializeToString()


def _forwarder(settings: ForwardSettings) -> tuple[Forwarder, SelfMetrics]:
    metrics = SelfMetrics(process=False)
    return Forwarder(settings, metrics=ForwardMetrics(metrics)), metrics


def _names(raw: bytes) -> list[str]:
    request = remote_pb2.WriteRequest.FromString(raw)
    return [series.labels[0].value for series in request.timeseries]


def _value(metrics: SelfMetrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


def test_queued_requests_are_joined_in_order_into_one_send(target: Target) -> None:
    forwarder, metrics = _forwarder(
        ForwardSettings(url=target.url, max_samples_per_send=3, bearer_token=lambda: "s3cret")
    )
    for names in (("a", "b"), ("c",), ("d",)):
        assert forwarder.offer(_request(*names), len(names))
    asyncio.run(forwarder.start())
    first_headers, first = target.received.get(timeout=5)
    _, second = target.received.get(timeout=5)
    asyncio.run(forwarder.stop())
    assert (_names(first), _names(second)) == (["a", "b", "c"], ["d"])
    assert first_headers["Content-Encoding"] == "snappy"
    assert first_headers["Content-Type"] == "application/x-protobuf"
    assert first_headers["X-Prometheus-Remote-Write-Version"] == "0.1.0"
    assert first_headers["Authorization"] == "Bearer s3cret"
    assert _value(metrics, "lens_remote_write_forwarded_samples_total") == 4


def test_a_5xx_or_429_is_retried_and_a_4xx_dropped(target: Target) -> None:
    target.statuses.put((503, {}))
    target.statuses.put((429, {"Retry-After": "0"}))
    target.statuses.put((204, {}))
    target.statuses.put((400, {}))
    forwarder, metrics = _forwarder(ForwardSettings(url=target.url, max_samples_per_send=1))
    asyncio.run(forwarder.start())
    forwarder.offer(_request("kept"), 1)
    forwarder.offer(_request("refused"), 1)
    forwarder.offer(_request("after"), 1)
    assert _names(target.received.get(timeout=10)[1]) == ["kept"]
    assert _names(target.received.get(timeout=10)[1]) == ["after"]
    asyncio.run(forwarder.stop())
    assert _value(metrics, "lens_remote_write_forward_requests_total", code="503") == 1
    assert _value(metrics, "lens_remote_write_forward_requests_total", code="429") == 1
    assert _value(metrics, "lens_remote_write_dropped_samples_total", reason="rejected") == 1
    assert _value(metrics, "lens_remote_write_forwarded_samples_total") == 2


def test_an_unreachable_target_is_given_up_after_the_configured_time() -> None:
    forwarder, metrics = _forwarder(
        ForwardSettings(url="http://127.0.0.1:9/write", give_up_seconds=1.0, timeout_seconds=0.5)
    )
    asyncio.run(forwarder.start())
    forwarder.offer(_request("x", "y"), 2)
    deadline = threading.Event()
    for _ in range(50):
        if _value(metrics, "lens_remote_write_dropped_samples_total", reason="gave_up") == 2:
            break
        deadline.wait(0.1)
    asyncio.run(forwarder.stop())
    assert _value(metrics, "lens_remote_write_dropped_samples_total", reason="gave_up") == 2
    assert _value(metrics, "lens_remote_write_forward_requests_total", code="error") >= 1


def test_a_full_queue_refuses_and_stop_counts_what_was_left() -> None:
    forwarder, metrics = _forwarder(
        ForwardSettings(url="http://127.0.0.1:9/write", queue_requests=2, timeout_seconds=0.2)
    )
    assert forwarder.offer(_request("a"), 1)
    assert forwarder.offer(_request("b"), 1)
    assert not forwarder.offer(_request("c"), 1)
    assert _value(metrics, "lens_remote_write_queued_requests") == 2
    asyncio.run(forwarder.start())
    asyncio.run(forwarder.stop())
    assert _value(metrics, "lens_remote_write_dropped_samples_total", reason="stopped") == 2
    assert not forwarder.offer(_request("d"), 1), "nothing is taken once stopping"


def test_in_2_0_each_request_goes_alone_with_its_headers(target: Target) -> None:
    forwarder, _ = _forwarder(ForwardSettings(url=target.url, version=Version.V2))
    forwarder.offer(b"\x0a\x01a", 1)
    forwarder.offer(b"\x0a\x01b", 1)
    asyncio.run(forwarder.start())
    headers, first = target.received.get(timeout=5)
    _, second = target.received.get(timeout=5)
    asyncio.run(forwarder.stop())
    assert (first, second) == (b"\x0a\x01a", b"\x0a\x01b")
    assert headers["Content-Type"] == "application/x-protobuf;proto=io.prometheus.write.v2.Request"
    assert headers["X-Prometheus-Remote-Write-Version"] == "2.0.0"
