"""The one-parse check of a 1.0 body: everything but the inside of labels."""

from __future__ import annotations

import pytest
from google.protobuf.message import DecodeError

from lens.proto._generated.prometheus import remote_pb2
from lens.telemetry.remotewrite import shallow


def _request() -> remote_pb2.WriteRequest:
    request = remote_pb2.WriteRequest()
    series = request.timeseries.add()
    series.labels.add(name="__name__", value="gpu_gfx_activity")
    series.samples.add(value=97.0, timestamp=1787486401482)
    exemplar = series.exemplars.add(value=1.0, timestamp=1787486401482)
    exemplar.labels.add(name="trace_id", value="ab")
    series.histograms.add(count_int=1, sum=2.0)
    request.metadata.add(type=2, metric_family_name="gpu_gfx_activity", help="Busy.")
    return request


def test_a_valid_request_passes() -> None:
    shallow.check(_request().SerializeToString())
    shallow.check(b"")


def test_the_inside_of_labels_is_left_to_the_cache() -> None:
    # A label whose bytes are no Label message (a lone tag) and one with bad UTF-8.
    for label in (b"\x0a\x01\x0a", b"\x0a\x03\x0a\x01\xff"):
        raw = b"\x0a" + bytes([len(label)]) + label
        shallow.check(raw)
        with pytest.raises(DecodeError):
            remote_pb2.WriteRequest.FromString(raw)


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[:-1],  # truncated metadata
        lambda raw: raw.replace(b"trace_id", b"trace\xff\xfe\xfd"),  # exemplar label UTF-8
        lambda raw: raw.replace(b"Busy.", b"Bus\xff."),  # metadata UTF-8
        lambda raw: raw.replace(b"\x09\x00\x00\x00\x00\x00@X@", b"\x0b\x00\x00\x00\x00\x00@X@"),
    ],
)
def test_damage_outside_labels_is_found(damage) -> None:  # type: ignore[no-untyped-def]
    raw = _request().SerializeToString()
    damaged = damage(raw)
    assert damaged != raw
    with pytest.raises(DecodeError):
        shallow.check(damaged)
