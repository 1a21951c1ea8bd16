"""The event server through a plain gRPC client: acks, duplicates, gaps, bad records, tokens."""

from __future__ import annotations

from collections.abc import Callable

import grpc
import pytest

from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.proto._generated.lens.v1 import events_pb2_grpc
from lens.store import models

pytestmark = [
    pytest.mark.slow_timeout,
    pytest.mark.parametrize("empty_database_url", ["sqlite", "postgresql"], indirect=True),
]


def _metrics(running: object) -> bytes:
    process = running.jobs.process  # type: ignore[attr-defined]
    process.publisher.publish()
    body, _at = process.cache.latest()
    return bytes(body)


def _send(address: str, batches: list[pb.EventBatch], token: str = "") -> list[pb.Ack]:
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    with grpc.insecure_channel(address) as channel:
        stub = events_pb2_grpc.ContainerEventsStub(channel)
        return list(stub.Stream(iter(batches), metadata=metadata, timeout=10))


def test_records_are_committed_once_and_acknowledged_in_order(
    start_jobs: Callable[..., object], started_record: Callable[[int, str], pb.Record]
) -> None:
    running = start_jobs()
    address = running.address  # type: ignore[attr-defined]
    hello = pb.EventBatch(node="n1", boot_id="b1")
    first = pb.EventBatch(
        node="n1", boot_id="b1", records=[started_record(1, "a"), started_record(2, "b")]
    )
    acks = _send(address, [hello, first])
    assert [a.committed_sequence for a in acks] == [0, 2]
    # Reconnect and resend 1..2 with 3: only 3 is new. A bad record is committed and counted.
    again = pb.EventBatch(
        node="n1",
        boot_id="b1",
        records=[started_record(1, "a"), started_record(2, "b"), started_record(3, "c")],
    )
    bad = pb.EventBatch(node="n1", boot_id="b1", records=[pb.Record(sequence=4)])
    assert [a.committed_sequence for a in _send(address, [again, bad])][-1] == 4
    assert sorted(c.container_id for c in models.NodeContainer.select()) == ["a", "b", "c"]
    assert models.NodeContainerEvent.select().count() == 3
    text = _metrics(running)
    assert b"lens_events_duplicates_total 2.0" in text
    assert b'primus_lens_jobs_container_event_error_total{source="k8s"} 1.0' in text


def test_a_sequence_gap_is_counted(
    start_jobs: Callable[..., object], started_record: Callable[[int, str], pb.Record]
) -> None:
    running = start_jobs()
    batch = pb.EventBatch(node="n1", boot_id="b2", records=[started_record(5, "a")])
    assert _send(running.address, [batch])[-1].committed_sequence == 5  # type: ignore[attr-defined]
    assert b"lens_events_gaps_total 4.0" in _metrics(running)


def test_a_wrong_token_is_refused(
    start_jobs: Callable[..., object], started_record: Callable[[int, str], pb.Record]
) -> None:
    running = start_jobs(token="s3cret")
    batch = pb.EventBatch(node="n1", boot_id="b3", records=[started_record(1, "a")])
    with pytest.raises(grpc.RpcError) as refused:
        _send(running.address, [batch], token="wrong")  # type: ignore[attr-defined]
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert _send(running.address, [batch], token="s3cret")[-1].committed_sequence == 1  # type: ignore[attr-defined]
