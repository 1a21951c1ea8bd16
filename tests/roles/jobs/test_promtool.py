"""`promtool check metrics` (Debian's prometheus package) finds no error and no warning in what
the jobs role serves on /metrics, once agents' event streams have filled its labelled families."""

from __future__ import annotations

import http.client
from collections.abc import Callable

import grpc
import pytest

from lens.containers import wire
from lens.containers.model import Container, ContainerEvent, EventType, Source
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.proto._generated.lens.v1 import events_pb2_grpc

pytestmark = pytest.mark.slow_timeout


def _started(sequence: int, container_id: str) -> pb.Record:
    container = Container(
        id=container_id, name="main", pod=None, devices=(), created_at=1.0, status="Running"
    )
    event = ContainerEvent(
        type=EventType.STARTED, source=Source.CONTAINERD, container=container, time=1.0
    )
    return wire.Encoder().record(event, sequence=sequence, observed_at=1.0)


def _send(address: str, batches: list[pb.EventBatch]) -> list[pb.Ack]:
    with grpc.insecure_channel(address) as channel:
        stub = events_pb2_grpc.ContainerEventsStub(channel)
        return list(stub.Stream(iter(batches), timeout=10))


def _metrics(port: int) -> bytes:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=3)
    try:
        connection.request("GET", "/metrics")
        response = connection.getresponse()
        assert response.status == 200
        return response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_metrics_of_the_jobs_role_pass_promtool(
    start_jobs: Callable[..., object], promtool_problems: Callable[[bytes], str]
) -> None:
    running = start_jobs()
    # A gap before the first record, a record that is no event, then one resent (a duplicate).
    batch = pb.EventBatch(
        node="n1", boot_id="b1", records=[_started(2, "a"), _started(3, "b"), pb.Record(sequence=4)]
    )
    resent = pb.EventBatch(node="n1", boot_id="b1", records=[_started(3, "b")])
    acks = _send(running.address, [batch, resent])  # type: ignore[attr-defined]
    assert acks[-1].committed_sequence == 4
    running.jobs.process.publisher.publish()  # type: ignore[attr-defined]
    body = _metrics(running.jobs.process.http.port)  # type: ignore[attr-defined]
    text = body.decode()
    for series in (
        'primus_lens_jobs_container_event_recv_total{source="k8s"}',
        'primus_lens_jobs_container_event_error_total{source="k8s"}',
        'primus_lens_jobs_event_processing_duration_seconds_bucket{source="k8s",le="+Inf"}',
        "lens_events_duplicates_total 1.0",
        "lens_events_gaps_total 1.0",
        'lens_events_unusable_records_total{reason="record without a body"} 1.0',
        'lens_events_lag_seconds_bucket{le="+Inf"}',
    ):
        assert series in text, f"{series} is in the output under test"
    assert promtool_problems(body) == ""
