"""Varints, field heads and field skipping against the protobuf library's own encoding."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lens.proto._generated.prometheus import types_pb2
from lens.telemetry.remotewrite import wire


@given(st.integers(0, 2**64 - 1))
def test_varints_round_trip_as_protobuf_writes_them(value: int) -> None:
    encoded = wire.encode_varint(value)
    # Histogram.count_int: a uint64 in a oneof, so written even when 0.
    assert b"\x08" + encoded == types_pb2.Histogram(count_int=value).SerializeToString()
    assert wire.read_varint(b"\x00" + encoded + b"\x01", 1) == (value, 1 + len(encoded))


def test_known_varints() -> None:
    assert wire.encode_varint(0) == b"\x00"
    assert wire.encode_varint(300) == b"\xac\x02"
    assert wire.encode_varint(1787486401482) == bytes.fromhex("cae7f7f38234")


@given(st.integers(0, 100_000))
def test_field1_heads_are_tag_and_length(length: int) -> None:
    label_field = types_pb2.Labels(labels=[types_pb2.Label(name="n" * length)]).SerializeToString()
    inner = types_pb2.Label(name="n" * length).SerializeToString()
    assert label_field == wire.field1_head(len(inner)) + inner


def test_fields_are_skipped_by_wire_type() -> None:
    data = b"\x08\x96\x01" + b"\x11" + b"8" * 8 + b"\x1a\x03abc" + b"\x25" + b"4" * 4 + b"\x2b"
    ends = []
    pos = 0
    while pos < len(data) - 1:
        after = wire.skip_field(data, pos)
        assert after is not None
        ends.append(after)
        pos = after
    assert ends == [3, 12, 17, 22]
    assert wire.skip_field(data, 22) is None  # a group is the protobuf parser's to walk
