"""Messages that are no event batch: INVALID_ARGUMENT, counted, one log line a minute."""

from __future__ import annotations

import logging
from collections.abc import Callable

import grpc
import pytest
from prometheus_client import CollectorRegistry, Counter

from lens.containers import wire
from lens.containers.server import serving
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.store import models

GARBAGE = b"\xff\xff\xff\xff\x0fnot protobuf at all"


def _raw_stream(address: str, messages: list[bytes]) -> list[pb.Ack]:
    with grpc.insecure_channel(address) as channel:
        stream = channel.stream_stream(
            f"/{serving.SERVICE}/Stream",
            request_serializer=lambda data: data,
            response_deserializer=pb.Ack.FromString,
        )
        return list(stream(iter(messages), timeout=10))


@pytest.mark.slow_timeout
@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_garbage_is_invalid_argument_counted_and_logged_once(
    start_jobs: Callable[..., object],
    started_record: Callable[[int, str], pb.Record],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Issue 16, point 13: garbage used to be UNKNOWN with a traceback per message, uncounted.
    running = start_jobs()
    address = running.address  # type: ignore[attr-defined]
    good = pb.EventBatch(node="n1", boot_id="b1", records=[started_record(1, "a")])
    caplog.set_level(logging.WARNING)
    for _ in range(3):
        with pytest.raises(grpc.RpcError) as refused:
            _raw_stream(address, [good.SerializeToString(), GARBAGE])
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert refused.value.details() == "not a lens.v1 EventBatch"
    assert [c.container_id for c in models.NodeContainer.select()] == ["a"], "what came first"
    process = running.jobs.process  # type: ignore[attr-defined]
    process.publisher.publish()
    body, _at = process.cache.latest()
    assert b'lens_events_invalid_messages_total{reason="not a lens.v1 EventBatch"} 3.0' in body
    refusals = [
        r for r in caplog.records if r.getMessage() == "refused a message that is no event batch"
    ]
    assert len(refusals) == 1
    assert all(r.exc_info is None for r in caplog.records), "no traceback"


def test_refusals_log_at_most_once_a_minute_with_the_count_between() -> None:
    clock = [0.0]
    counter = Counter("t_total", "Refusals.", ("reason",), registry=CollectorRegistry())
    refusals = serving.Refusals(counter, monotonic=lambda: clock[0])
    logged: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = logged.append  # type: ignore[method-assign]
    serving.log.addHandler(handler)
    try:
        for second in (0.0, 1.0, 30.0, 61.0):
            clock[0] = second
            refusals.refuse("garbled", peer="ipv4:10.0.0.1:1")
    finally:
        serving.log.removeHandler(handler)
    assert counter.labels("garbled")._value.get() == 4
    assert [r.refused_since_last_line for r in logged] == [0, 2]  # type: ignore[attr-defined]


def test_skipped_records_are_counted_by_reason_with_the_first_ones_detail() -> None:
    counter = Counter("t_total", "Skips.", ("reason",), registry=CollectorRegistry())
    skips = serving.Refusals(counter, message="skipped unusable records", monotonic=lambda: 0.0)
    logged: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = logged.append  # type: ignore[method-assign]
    serving.log.addHandler(handler)
    try:
        skipped = [
            wire.WireError("time out of range", "time 253402300800s 0ns"),
            wire.WireError("time out of range", "created_at -62135596801s 0ns"),
            wire.WireError("record without a body"),
        ]
        skips.refuse_all(skipped, node="n1", boot_id="b1")
        skips.refuse_all(skipped[:1], node="n1", boot_id="b1")
    finally:
        serving.log.removeHandler(handler)
    assert counter.labels("time out of range")._value.get() == 3
    assert counter.labels("record without a body")._value.get() == 1
    lines = [
        (r.getMessage(), r.reason, r.detail, r.node, r.refused_since_last_line)  # type: ignore[attr-defined]
        for r in logged
    ]
    assert lines == [
        ("skipped unusable records", "time out of range", str(skipped[0]), "n1", 0),
        ("skipped unusable records", "record without a body", "record without a body", "n1", 0),
    ]
