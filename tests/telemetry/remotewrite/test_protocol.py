"""Content negotiation as the 2.0 spec and RFC 9110 put it, and snappy block bodies: what is
accepted, what is 415, what is 400, and that nothing else ever escapes."""

from __future__ import annotations

import contextlib

import cramjam
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.telemetry.remotewrite import protocol
from lens.telemetry.remotewrite.protocol import BadRequest, UnsupportedMediaType, Version


@pytest.mark.parametrize(
    ("header", "version"),
    [
        (None, Version.V1),
        ("", Version.V1),
        ("application/x-protobuf", Version.V1),
        ("application/x-protobuf;proto=prometheus.WriteRequest", Version.V1),
        ("application/x-protobuf;proto=io.prometheus.write.v2.Request", Version.V2),
        ("Application/X-Protobuf ; PROTO=io.prometheus.write.v2.Request", Version.V2),
        ('application/x-protobuf; proto="io.prometheus.write.v2.Request"', Version.V2),
        ("application/x-protobuf; charset=utf-8", Version.V1),
        ("application/x-protobuf; proto; =x; p r=y", Version.V1),  # no parameters at all
        ("application/x-protobuf;charset=x;proto=prometheus.WriteRequest", Version.V1),
        (protocol.CONTENT_TYPE_V1, Version.V1),
        (protocol.CONTENT_TYPE_V2, Version.V2),
    ],
)
def test_content_types_name_the_message(header: str | None, version: Version) -> None:
    assert protocol.version_of(header) is version


@pytest.mark.parametrize(
    "header",
    [
        "application/json",
        "application/x-protobuf;proto=io.prometheus.write.v3.Request",
        "application/x-protobuf;proto=IO.PROMETHEUS.WRITE.V2.REQUEST",
        "application/x-protobuf;proto=prometheus.WriteRequest;proto=io.prometheus.write.v2.Request",
        "text/plain; proto=prometheus.WriteRequest",
    ],
)
def test_other_content_types_are_unsupported_and_named(header: str) -> None:
    with pytest.raises(UnsupportedMediaType) as caught:
        protocol.version_of(header)
    assert repr(header) in str(caught.value)


@given(st.text(max_size=80))
def test_any_content_type_is_a_version_or_unsupported(header: str) -> None:
    with contextlib.suppress(UnsupportedMediaType):
        assert isinstance(protocol.version_of(header), Version)


def test_bodies_round_trip_through_snappy_block_format() -> None:
    raw = b"\x0a\x03abc" * 1000
    body = protocol.compress(raw)
    assert bytes(cramjam.snappy.decompress_raw(body)) == raw  # the block, not the framed format
    assert protocol.decompress(body, "snappy", max_bytes=len(raw)) == raw
    assert protocol.decompress(body, None, max_bytes=len(raw)) == raw
    assert protocol.decompress(body, " Snappy ", max_bytes=len(raw)) == raw


def test_the_size_limit_is_read_from_the_header_before_decoding() -> None:
    # A 5-byte header announcing 2**32 - 1 bytes and nothing after it: refused for its size,
    # not for the missing data, so nothing of that size was ever allocated.
    with pytest.raises(BadRequest, match="4294967295 bytes, more than the limit of 1000"):
        protocol.decompress(b"\xff\xff\xff\xff\x0f", "snappy", max_bytes=1000)
    body = protocol.compress(b"x" * 1001)
    with pytest.raises(BadRequest, match="1001 bytes"):
        protocol.decompress(body, "snappy", max_bytes=1000)


@pytest.mark.parametrize("encoding", ["gzip", "identity", "snappy, gzip", "x-snappy-framed"])
def test_other_encodings_are_unsupported(encoding: str) -> None:
    with pytest.raises(UnsupportedMediaType, match=repr(encoding)):
        protocol.decompress(protocol.compress(b"x"), encoding, max_bytes=10)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\x80\x80\x80\x80\x80\x80",
        b"\x0a\x00\x01",  # announces 10 bytes, a literal tag with nothing after it
        bytes(cramjam.snappy.compress(b"framed, not a block")),
    ],
)
def test_bad_snappy_is_a_bad_request(body: bytes) -> None:
    with pytest.raises(BadRequest, match="not snappy"):
        protocol.decompress(body, "snappy", max_bytes=1 << 20)


@given(st.binary(max_size=200))
def test_any_body_decompresses_or_is_a_bad_request(body: bytes) -> None:
    try:
        raw = protocol.decompress(body, "snappy", max_bytes=1 << 16)
    except BadRequest:
        return
    assert len(raw) <= 1 << 16
