"""The 1.0 wire-level rewrite: the hand-encoded example of shared/formats/remote-write.md, the
same bytes as the protobuf classes' straightforward rewrite for any request they build (on a
cold and on a warm cache), irregular layouts, and any bytes at all only ever a BadRequest."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.proto._generated.prometheus import remote_pb2, types_pb2
from lens.telemetry.remotewrite import v1, wire
from lens.telemetry.remotewrite.caching import LabelCache
from lens.telemetry.remotewrite.protocol import BadRequest
from tests.telemetry.remotewrite.reference import GpuRelabeler, reference_v1, v1_requests

# shared/formats/remote-write.md: amd_gpu_power_watts{gpu="0"} 137.0 @1787486401482, 63 bytes.
GOLDEN = bytes.fromhex(
    "0a 3d"
    " 0a 1f 0a 08 5f5f6e616d655f5f 12 13 616d645f6770755f706f7765725f7761747473"
    " 0a 08 0a 03 677075 12 01 30"
    " 12 10 09 0000000000206140 10 cae7f7f38234"
)


def _rewrite(raw: bytes, relabeler: GpuRelabeler, cache: LabelCache[bytes, v1.Entry] | None = None):
    cache = cache if cache is not None else LabelCache(relabeler, max_entries=1000)
    return v1.rewrite(raw, cache=cache, relabeler=relabeler)


def _labels(extra: list[tuple[str, str]]) -> bytes:
    """Label fields written by hand, as an encoder writes them."""
    out = b""
    for name, value in extra:
        label = b"\x0a" + bytes([len(name)]) + name.encode() + b"\x12" + bytes([len(value)])
        label += value.encode()
        out += b"\x0a" + bytes([len(label)]) + label
    return out


def test_the_golden_example_gains_the_workload_labels_and_keeps_its_sample() -> None:
    relabeler = GpuRelabeler(extra=(("pod", "p"),))
    done = _rewrite(GOLDEN, relabeler)
    labels = _labels([("__name__", "amd_gpu_power_watts"), ("gpu", "0"), ("pod", "p")])
    sample = bytes.fromhex("121009000000000020614010cae7f7f38234")
    assert done.body == b"\x0a" + bytes([len(labels) + len(sample)]) + labels + sample
    assert (done.series, done.samples, done.relabelled) == (1, 1, 1)
    (series,) = remote_pb2.WriteRequest.FromString(done.body).timeseries
    assert [(x.name, x.value) for x in series.labels][-1] == ("pod", "p")
    assert (series.samples[0].value, series.samples[0].timestamp) == (137.0, 1787486401482)


def test_a_series_without_gpu_passes_byte_for_byte() -> None:
    raw = GOLDEN.replace(b"\x0a\x03gpu", b"\x0a\x03cpu")
    done = _rewrite(raw, GpuRelabeler())
    assert done.body == raw and done.relabelled == 0 and done.samples == 1


def test_warm_cache_gives_the_same_bytes_without_asking_again() -> None:
    relabeler = GpuRelabeler()
    cache: LabelCache[bytes, v1.Entry] = LabelCache(relabeler, max_entries=1000)
    first = _rewrite(GOLDEN, relabeler, cache)
    assert relabeler.calls == 1
    second = _rewrite(GOLDEN, relabeler, cache)
    assert second == first and relabeler.calls == 1


def test_value_zero_samples_and_varied_tails_are_found() -> None:
    relabeler = GpuRelabeler()
    request = remote_pb2.WriteRequest()
    for value, count in ((0.0, 1), (1.5, 1), (0.0, 1), (2.0, 2), (0.0, 0)):
        series = request.timeseries.add()
        series.labels.add(name="gpu", value="1")
        for _ in range(count):
            series.samples.add(value=value, timestamp=1787486401482)
    raw = request.SerializeToString()
    cache: LabelCache[bytes, v1.Entry] = LabelCache(relabeler, max_entries=1000)
    for _ in range(2):
        done = _rewrite(raw, relabeler, cache)
        assert done.body == reference_v1(raw, relabeler)
        assert (done.series, done.samples, done.relabelled) == (5, 5, 5)


def test_metadata_stays_and_unknown_fields_go() -> None:
    request = remote_pb2.WriteRequest()
    request.metadata.add(type=2, metric_family_name="amd_gpu_power_watts", help="Power.")
    metadata = request.SerializeToString()
    cortex_source = b"\x10\x01"  # the reserved field 2
    done = _rewrite(metadata + GOLDEN + cortex_source, GpuRelabeler(extra=()))
    assert done.body == metadata + GOLDEN


@pytest.mark.parametrize(
    "raw",
    [
        # Labels after the sample, and a label before it: the classes put them in order.
        bytes.fromhex("0a")
        + bytes([len(GOLDEN) - 2])
        + GOLDEN[2 + 33 : 2 + 43]
        + GOLDEN[-18:]
        + GOLDEN[2:35],
        # A series spelled with a two-byte tag for its field 1.
        b"\x8a\x00" + GOLDEN[1:],
        # An unknown field inside the series.
        b"\x0a" + bytes([GOLDEN[1] + 2]) + GOLDEN[2:] + b"\x28\x01",
    ],
)
def test_irregular_layouts_read_as_the_classes_read_them(raw: bytes) -> None:
    relabeler = GpuRelabeler()
    assert _rewrite(raw, relabeler).body == reference_v1(raw, relabeler)


def test_a_long_sample_teaches_no_guess_a_later_series_could_fool() -> None:
    labels = _labels([("gpu", "1")])
    # A: one sample of 138 bytes (an unknown field pads it), so its length takes two bytes.
    padded = bytes.fromhex("09000000000000f03f10cae7f7f38234") + b"\x2a\x78" + b"p" * 120
    first = labels + b"\x12\x8a\x01" + padded
    # B: the same labels, then a 141-byte tail whose second byte equals A's one-byte length
    # but starts a two-byte varint (11): an 11-byte sample, then a label the walk must see.
    late_label = b"\x0a\x7d" + b"\x0a\x01x\x12\x78" + b"v" * 120
    second = labels + b"\x12\x8b\x00" + bytes.fromhex("09000000000000f03f1005") + late_label
    raw = b"".join(b"\x0a" + wire.encode_varint(len(s)) + s for s in (first, second))
    relabeler = GpuRelabeler()
    assert _rewrite(raw, relabeler).body == reference_v1(raw, relabeler)


def test_long_labels_and_large_series() -> None:
    request = remote_pb2.WriteRequest()
    series = request.timeseries.add()
    series.labels.add(name="gpu", value="g" * 300)
    series.labels.add(name="z", value="z" * 20000)
    series.samples.add(value=1.0, timestamp=5)
    raw = request.SerializeToString()
    relabeler = GpuRelabeler()
    assert _rewrite(raw, relabeler).body == reference_v1(raw, relabeler)


@pytest.mark.parametrize(
    ("labels", "reason"),
    [
        ([("gpu", "0"), ("gpu", "1")], "appears twice"),
        ([("", "0")], "empty name"),
    ],
)
def test_invalid_label_sets_are_bad_requests(labels: list[tuple[str, str]], reason: str) -> None:
    series = types_pb2.TimeSeries(labels=[types_pb2.Label(name=n, value=v) for n, v in labels])
    raw = remote_pb2.WriteRequest(timeseries=[series]).SerializeToString()
    with pytest.raises(BadRequest, match=reason):
        _rewrite(raw, GpuRelabeler())


def test_a_body_that_is_no_write_request_says_why() -> None:
    with pytest.raises(BadRequest, match=r"labels are no Label messages: .*bad UTF-8"):
        _rewrite(b"\x0a\x05\x0a\x03\x0a\x01\xff", GpuRelabeler())
    with pytest.raises(BadRequest, match=r"labels are no Label messages: .*corrupt"):
        _rewrite(b"\x0a\x03\x0a\x01\x0a", GpuRelabeler())
    with pytest.raises(BadRequest, match=r"no prometheus\.WriteRequest: Wire format was corrupt"):
        _rewrite(GOLDEN[:-1], GpuRelabeler())


@given(v1_requests())
def test_any_request_rewrites_as_the_classes_do(request: remote_pb2.WriteRequest) -> None:
    raw = request.SerializeToString()
    relabeler = GpuRelabeler()
    try:
        expected = reference_v1(raw, relabeler)
    except BadRequest:
        with pytest.raises(BadRequest):
            _rewrite(raw, relabeler)
        return
    cache: LabelCache[bytes, v1.Entry] = LabelCache(relabeler, max_entries=4)
    for _ in range(2):  # cold, then warm
        done = _rewrite(raw, relabeler, cache)
        assert done.body == expected
        assert done.series == len(request.timeseries)
        assert done.samples == sum(len(x.samples) for x in request.timeseries)
        assert done.exemplars == sum(len(x.exemplars) for x in request.timeseries)
        assert done.histograms == sum(len(x.histograms) for x in request.timeseries)


@given(st.binary(max_size=300))
def test_any_bytes_are_rewritten_or_a_bad_request(raw: bytes) -> None:
    relabeler = GpuRelabeler()
    try:
        done = _rewrite(raw, relabeler)
    except BadRequest:
        return
    remote_pb2.WriteRequest.FromString(done.body)


@given(v1_requests(), st.integers(0, 200), st.binary(min_size=1, max_size=3))
def test_damaged_requests_never_raise_anything_else(
    request: remote_pb2.WriteRequest, at: int, junk: bytes
) -> None:
    raw = request.SerializeToString()
    at = min(at, len(raw))
    with contextlib.suppress(BadRequest):
        _rewrite(raw[:at] + junk + raw[at + len(junk) :], GpuRelabeler())
