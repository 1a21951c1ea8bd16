"""The event server through a plain gRPC client: acks, duplicates, gaps, bad records, tokens,
agents streaming at once, and any message at all (property-based)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import cast

import grpc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.containers import wire
from lens.containers.model import Container, ContainerEvent, Device, EventType, Inventory, Source
from lens.containers.server.recording import EventRecorder
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.proto._generated.lens.v1 import events_pb2_grpc
from lens.store import models

pytestmark = [pytest.mark.slow_timeout]
SQLITE_AND_POSTGRESQL = pytest.mark.parametrize(
    "database_engine", ["sqlite", "postgresql"], indirect=True
)
EVERY_ENGINE = pytest.mark.parametrize(
    "database_engine", ["sqlite", "postgresql", "mysql"], indirect=True
)


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


@SQLITE_AND_POSTGRESQL
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


@SQLITE_AND_POSTGRESQL
def test_a_sequence_gap_is_counted(
    start_jobs: Callable[..., object], started_record: Callable[[int, str], pb.Record]
) -> None:
    running = start_jobs()
    batch = pb.EventBatch(node="n1", boot_id="b2", records=[started_record(5, "a")])
    assert _send(running.address, [batch])[-1].committed_sequence == 5  # type: ignore[attr-defined]
    assert b"lens_events_gaps_total 4.0" in _metrics(running)


@SQLITE_AND_POSTGRESQL
def test_a_wrong_token_is_refused(
    start_jobs: Callable[..., object], started_record: Callable[[int, str], pb.Record]
) -> None:
    running = start_jobs(token="s3cret")
    batch = pb.EventBatch(node="n1", boot_id="b3", records=[started_record(1, "a")])
    with pytest.raises(grpc.RpcError) as refused:
        _send(running.address, [batch], token="wrong")  # type: ignore[attr-defined]
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert _send(running.address, [batch], token="s3cret")[-1].committed_sequence == 1  # type: ignore[attr-defined]


def _counted(running: object, name: str, **labels: str) -> float | None:
    registry = running.jobs.process.metrics.registry  # type: ignore[attr-defined]
    value = registry.get_sample_value(name, labels)
    return None if value is None else float(value)


@EVERY_ENGINE
def test_a_record_the_store_cannot_hold_is_skipped_counted_and_acknowledged_past(
    start_jobs: Callable[..., object], started_record: Callable[[int, str], pb.Record]
) -> None:
    # Issue 16, point 6: one such record failed its whole batch on every resend, uncounted, and
    # the agent's stream never advanced again.
    running = start_jobs()
    address = running.address  # type: ignore[attr-defined]
    past_9999 = started_record(2, "b")
    past_9999.event.time.seconds = 253_402_300_800
    too_far = started_record(5, "d")
    too_far.sequence = 2**63  # as no agent of this version sends it
    batch = pb.EventBatch(
        node="n1", boot_id="b1", records=[started_record(1, "a"), past_9999, started_record(3, "c")]
    )
    assert _send(address, [batch])[-1].committed_sequence == 3
    assert sorted(c.container_id for c in models.NodeContainer.select()) == ["a", "c"]
    # A sequence past a signed 64-bit column: acknowledged, and the stream goes on from there.
    further = pb.EventBatch(node="n1", boot_id="b1", records=[started_record(4, "e"), too_far])
    assert _send(address, [batch, further])[-1].committed_sequence == 2**63
    db = running.jobs.db  # type: ignore[attr-defined]
    assert EventRecorder(db, cluster="default").committed("n1", "b1") == 2**63 - 1
    assert sorted(c.container_id for c in models.NodeContainer.select()) == ["a", "c", "e"]
    unusable = "lens_events_unusable_records_total"
    assert _counted(running, unusable, reason="time out of range") == 1
    assert _counted(running, unusable, reason="sequence out of range") == 1
    assert _counted(running, "lens_events_committed_total") == 3
    assert _counted(running, "lens_events_gaps_total") == 0
    # Resent (its ack lost): acknowledged again.
    assert _send(address, [further])[-1].committed_sequence == 2**63


def _stream_of(agent: int, *, batches: int, size: int) -> list[pb.EventBatch]:
    """An agent's batches: each opens with an inventory (a read before the writes), then events
    of containers of its own."""
    encoder = wire.Encoder()
    stream = []
    for number in range(batches):
        first = number * size + 1
        records = [
            encoder.record(
                Inventory(
                    source=Source.CONTAINERD,
                    time=float(first),
                    container_ids=tuple(f"{agent}-{s}" for s in range(1, first)),
                ),
                sequence=first,
                observed_at=1.0,
            )
        ]
        for sequence in range(first + 1, first + size):
            container = Container(
                id=f"{agent}-{sequence}",
                name="main",
                pod=None,
                devices=(Device(type="gpu", name="MI300X", number=0, uuid=f"g{agent}"),),
                created_at=1.0,
                status="Running",
            )
            event = ContainerEvent(
                type=EventType.STARTED,
                source=Source.CONTAINERD,
                container=container,
                time=float(sequence),
            )
            records.append(encoder.record(event, sequence=sequence, observed_at=1.0))
        stream.append(pb.EventBatch(node=f"n{agent}", boot_id=f"b{agent}", records=records))
    return stream


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_eight_agents_streaming_at_once_on_sqlite_all_commit(
    start_jobs: Callable[..., object],
) -> None:
    # Issue 16, point 7: with 6 agents at once, 52 of 180 valid batches were refused with
    # "database is locked".
    running = start_jobs()
    address = running.address  # type: ignore[attr-defined]
    agents, batches, size = 8, 15, 10
    streams = [_stream_of(agent, batches=batches, size=size) for agent in range(agents)]
    start = threading.Barrier(agents)
    acks: dict[int, list[pb.Ack]] = {}
    failures: list[BaseException] = []

    def agent(number: int) -> None:
        try:
            start.wait(10)
            acks[number] = _send(address, streams[number])
        except BaseException as exc:  # the test's verdict, below
            failures.append(exc)

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(agents)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(50)
    assert failures == []
    assert {n: a[-1].committed_sequence for n, a in acks.items()} == {
        n: batches * size for n in range(agents)
    }
    assert models.NodeContainer.select().count() == agents * batches * (size - 1)
    assert models.NodeContainerEvent.select().count() == agents * batches * (size - 1)
    assert models.NodeContainerDevice.select().count() == agents * batches * (size - 1)
    assert _counted(running, "lens_events_committed_total") == agents * batches * size


# --- properties: any message gives INVALID_ARGUMENT or acknowledgements, and loses nothing -----

_NODES = ("n1", "n2")
# Boots an example starts ("new-", made unique per example, so that its records are fresh) or
# goes on with from earlier examples ("old": its records mostly resent).
_BOOTS = ("new-a", "new-b", "old")


def _stored() -> tuple[set[str], set[tuple[str, str, object]], dict[tuple[str, str], int]]:
    """What the store holds: container ids, event keys, committed sequence per agent boot."""
    events = models.NodeContainerEvent
    streams = models.EventStream
    return (
        {
            str(c.container_id)
            for c in models.NodeContainer.select(models.NodeContainer.container_id)
        },
        {
            (str(e.container_id), str(e.event_type), e.created_at)
            for e in events.select(events.container_id, events.event_type, events.created_at)
        },
        {
            (str(s.node_name), str(s.boot_id)): int(s.committed_sequence)
            for s in streams.select(streams.node_name, streams.boot_id, streams.committed_sequence)
        },
    )


def _still_stored(
    before: tuple[set[str], set[tuple[str, str, object]], dict[tuple[str, str], int]],
) -> None:
    containers, events, committed = _stored()
    assert before[0] <= containers
    assert before[1] <= events
    assert all(committed[key] >= sequence for key, sequence in before[2].items())


def _stream_raw(address: str, messages: list[bytes]) -> tuple[list[pb.Ack], grpc.RpcError | None]:
    """The acks to `messages` sent on one stream, and the error that ended it, if one did."""
    acks: list[pb.Ack] = []
    with grpc.insecure_channel(address) as channel:
        stream = channel.stream_stream(
            "/lens.v1.ContainerEvents/Stream",
            request_serializer=lambda data: data,
            response_deserializer=pb.Ack.FromString,
        )
        try:
            for ack in stream(iter(messages), timeout=10):
                acks.append(ack)
        except grpc.RpcError as exc:
            return acks, exc
    return acks, None


@st.composite
def _records(draw: st.DrawFn, started_record: Callable[[int, str], pb.Record]) -> pb.Record:
    """A container's start or an inventory, usable or with one value the store cannot hold."""
    sequence = draw(st.integers(0, 40))
    if draw(st.integers(0, 4)) == 0:
        inventory = Inventory(
            source=Source.CONTAINERD,
            time=float(sequence),
            container_ids=tuple(draw(st.lists(st.sampled_from("abcd"), max_size=3))),
        )
        return wire.Encoder().record(inventory, sequence=sequence, observed_at=1.0)
    record = started_record(sequence, draw(st.sampled_from("abcd")))
    fault = draw(st.sampled_from([None, None, "sequence", "time", "text", "nul", "type", "body"]))
    if fault == "sequence":
        record.sequence = draw(st.integers(2**63 - 1, 2**64 - 1))
    elif fault == "time":
        record.event.time.seconds = draw(
            st.integers(253_402_300_800, 2**63 - 1) | st.integers(-(2**63), -30_610_224_001)
        )
    elif fault == "text":
        record.event.container_name = draw(st.text(min_size=254, max_size=300))
    elif fault == "nul":
        record.event.pod.namespace = "team\0a"
    elif fault == "type":
        unknown = draw(st.integers(-1, 9).filter(lambda t: not 1 <= t <= 6))
        record.event.type = cast(pb.EventType, unknown)
    elif fault == "body":
        record.ClearField("event")
    return record


@st.composite
def _batches(draw: st.DrawFn, started_record: Callable[[int, str], pb.Record]) -> pb.EventBatch:
    """A batch of an agent boot (one the store cannot name now and then)."""
    node = draw(st.sampled_from(_NODES))
    batch = pb.EventBatch(node=node, boot_id=f"{node}-{draw(st.sampled_from(_BOOTS))}")
    batch.records.extend(draw(st.lists(_records(started_record), max_size=6)))
    if draw(st.integers(0, 9)) == 0:
        batch.boot_id = draw(st.sampled_from(["b" * 65, "b\0"]))
    return batch


@EVERY_ENGINE
@pytest.mark.hypothesis  # runs @given inside: scripts/fuzz selects it by this mark
def test_any_batches_are_acknowledged_through_their_last_sequence_or_refused(
    start_jobs: Callable[..., object], started_record: Callable[[int, str], pb.Record]
) -> None:
    """Batches of usable and unusable records: every sequence sent is acknowledged (committed
    or skipped) unless a batch names no agent boot the store can hold, which ends the stream
    with INVALID_ARGUMENT after the batches before it; nothing stored is ever lost."""
    running = start_jobs()
    address = running.address  # type: ignore[attr-defined]

    examples = itertools.count()

    @given(st.lists(_batches(started_record), min_size=1, max_size=3))
    def check(batches: list[pb.EventBatch]) -> None:
        example = next(examples)
        for batch in batches:
            batch.boot_id = batch.boot_id.replace("new", f"{example}")
        before = _stored()
        acks, error = _stream_raw(address, [b.SerializeToString() for b in batches])
        usable = batches
        if error is not None:
            assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, error.details()
            assert error.details() == wire.UNUSABLE_AGENT.reason
            usable = batches[
                : next(i for i, b in enumerate(batches) if len(b.boot_id) > 64 or "\0" in b.boot_id)
            ]
        _still_stored(before)
        after = _stored()[2]
        for boot_id in {b.boot_id for b in usable}:
            key = (boot_id.split("-")[0], boot_id)
            sent = max(
                (r.sequence for b in usable if b.boot_id == boot_id for r in b.records), default=0
            )
            expected = max(before[2].get(key, 0), sent)
            assert max(a.committed_sequence for a in acks if a.boot_id == boot_id) == expected
            assert after.get(key, 0) == min(expected, wire.MAX_SEQUENCE)

    check()


_SEED = pb.EventBatch(node="n1", boot_id="n1-seed")


@EVERY_ENGINE
@pytest.mark.hypothesis  # runs @given inside: scripts/fuzz selects it by this mark
def test_any_message_is_acknowledged_or_invalid_argument_and_loses_nothing(
    start_jobs: Callable[..., object], started_record: Callable[[int, str], pb.Record]
) -> None:
    """Any bytes, or a valid batch with some bytes changed: never another gRPC status (an
    exception in the server), and what is stored stays."""
    running = start_jobs()
    address = running.address  # type: ignore[attr-defined]
    seed = pb.EventBatch(node="n1", boot_id="n1-seed", records=[started_record(1, "kept")])
    assert _send(address, [seed])[-1].committed_sequence == 1
    valid = pb.EventBatch(
        node="n2", boot_id="n2-a", records=[started_record(s, "abc"[s % 3]) for s in range(1, 4)]
    ).SerializeToString()

    @st.composite
    def changed(draw: st.DrawFn) -> bytes:
        data = bytearray(valid)
        for _ in range(draw(st.integers(1, 3))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(data)

    @given(st.lists(st.binary(max_size=200) | changed(), min_size=1, max_size=3))
    def check(messages: list[bytes]) -> None:
        before = _stored()
        _acks, error = _stream_raw(address, messages)
        if error is not None:
            assert error.code() is grpc.StatusCode.INVALID_ARGUMENT, error.details()
        _still_stored(before)
        assert "kept" in _stored()[0]

    check()
