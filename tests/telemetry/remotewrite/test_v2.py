"""2.0 bodies relabelled into 2.0 and 1.0, and 1.0 bodies into 2.0: every label set, sample,
histogram, exemplar and metadata arrives as the specs say, what cannot is counted, and any
bytes at all are only ever rewritten or a BadRequest."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.proto._generated.io.prometheus.write.v2 import types_pb2 as v2_pb2
from lens.proto._generated.prometheus import remote_pb2
from lens.telemetry.remotewrite import symbols, v2
from lens.telemetry.remotewrite.caching import LabelCache
from lens.telemetry.remotewrite.protocol import BadRequest, Labels, Rewritten, Version
from tests.telemetry.remotewrite.reference import (
    GpuRelabeler,
    expected_labels,
    v1_requests,
    v2_requests,
)


def _cache(relabeler: GpuRelabeler) -> LabelCache[symbols.Flat, symbols.Entry]:
    return LabelCache(relabeler, max_entries=100)


def _rewrite(raw: bytes, to: Version, relabeler: GpuRelabeler | None = None) -> Rewritten:
    relabeler = relabeler or GpuRelabeler()
    return v2.rewrite(raw, to=to, cache=_cache(relabeler), relabeler=relabeler)


def _upgrade(raw: bytes, relabeler: GpuRelabeler | None = None) -> Rewritten:
    relabeler = relabeler or GpuRelabeler()
    return v2.upgrade(raw, cache=_cache(relabeler), relabeler=relabeler)


def _v2_labels(table: list[str], refs: list[int]) -> list[tuple[str, str]]:
    return [(table[refs[i]], table[refs[i + 1]]) for i in range(0, len(refs), 2)]


def _samples(series: v2_pb2.TimeSeries | remote_pb2.prometheus_dot_types__pb2.TimeSeries):
    """(value bits, timestamp) of each sample: NaN compares by its bits."""
    return [(struct.pack("<d", s.value), s.timestamp) for s in series.samples]


def _expected_or_bad(pairs: list[list[tuple[str, str]]]) -> list[Labels] | None:
    try:
        return [expected_labels(labels, GpuRelabeler()) for labels in pairs]
    except BadRequest:
        return None


@given(v2_requests())
def test_2_0_into_2_0_keeps_everything_but_the_labels(request: v2_pb2.Request) -> None:
    table = list(request.symbols)
    expected = _expected_or_bad(
        [_v2_labels(table, list(s.labels_refs)) for s in request.timeseries]
    )
    if expected is None:
        with pytest.raises(BadRequest):
            _rewrite(request.SerializeToString(), Version.V2)
        return
    done = _rewrite(request.SerializeToString(), Version.V2)
    out = v2_pb2.Request.FromString(done.body)
    new = list(out.symbols)
    assert new[0] == "" and len(set(new)) == len(new)
    assert [tuple(_v2_labels(new, list(s.labels_refs))) for s in out.timeseries] == expected
    for before, after in zip(request.timeseries, out.timeseries, strict=True):
        assert list(after.samples) == list(before.samples) or _samples(after) == _samples(before)
        assert [s.start_timestamp for s in after.samples] == [
            s.start_timestamp for s in before.samples
        ]
        assert [_v2_labels(new, list(e.labels_refs)) for e in after.exemplars] == [
            _v2_labels(table, list(e.labels_refs)) for e in before.exemplars
        ]
        assert after.metadata.type == before.metadata.type
        assert new[after.metadata.help_ref] == table[before.metadata.help_ref]
    assert done.samples == sum(len(s.samples) for s in request.timeseries)
    assert done.exemplars == sum(len(s.exemplars) for s in request.timeseries)
    assert done.dropped == 0


@given(v2_requests())
def test_2_0_into_1_0_drops_only_start_timestamps_and_counts_them(request: v2_pb2.Request) -> None:
    table = list(request.symbols)
    expected = _expected_or_bad(
        [_v2_labels(table, list(s.labels_refs)) for s in request.timeseries]
    )
    if expected is None:
        return
    done = _rewrite(request.SerializeToString(), Version.V1)
    out = remote_pb2.WriteRequest.FromString(done.body)
    assert [tuple((x.name, x.value) for x in s.labels) for s in out.timeseries] == expected
    for before, after in zip(request.timeseries, out.timeseries, strict=True):
        assert _samples(after) == _samples(before)
        assert [[(x.name, x.value) for x in e.labels] for e in after.exemplars] == [
            _v2_labels(table, list(e.labels_refs)) for e in before.exemplars
        ]
    starts = sum(s.start_timestamp != 0 for series in request.timeseries for s in series.samples)
    assert done.dropped == starts
    named = {dict(labels).get("__name__") for labels in expected}
    assert {m.metric_family_name for m in out.metadata} <= named


@given(v1_requests())
def test_1_0_into_2_0_carries_every_sample_histogram_and_exemplar(
    request: remote_pb2.WriteRequest,
) -> None:
    expected = _expected_or_bad([[(x.name, x.value) for x in s.labels] for s in request.timeseries])
    if expected is None:
        with pytest.raises(BadRequest):
            _upgrade(request.SerializeToString())
        return
    done = _upgrade(request.SerializeToString())
    out = v2_pb2.Request.FromString(done.body)
    table = list(out.symbols)
    assert [tuple(_v2_labels(table, list(s.labels_refs))) for s in out.timeseries] == expected
    for before, after in zip(request.timeseries, out.timeseries, strict=True):
        assert _samples(after) == _samples(before)
        assert [h.SerializeToString() for h in after.histograms] == [
            h.SerializeToString() for h in before.histograms
        ]
        assert [_v2_labels(table, list(e.labels_refs)) for e in after.exemplars] == [
            [(x.name, x.value) for x in e.labels] for e in before.exemplars
        ]
    assert done.histograms == sum(len(s.histograms) for s in request.timeseries)


def test_1_0_metadata_lands_on_the_series_of_its_family_or_is_counted() -> None:
    request = remote_pb2.WriteRequest()
    for name in ("gpu_energy_joules_total", "gpu_busy_bucket", "gpu_busy_sum", "unrelated"):
        request.timeseries.add().labels.add(name="__name__", value=name)
    request.metadata.add(type=1, metric_family_name="gpu_energy_joules_total", help="Energy.")
    request.metadata.add(type=3, metric_family_name="gpu_busy", help="Busy.", unit="seconds")
    request.metadata.add(type=2, metric_family_name="gone", help="No series.")
    done = _upgrade(request.SerializeToString())
    out = v2_pb2.Request.FromString(done.body)
    table = list(out.symbols)
    found = [
        (s.metadata.type, table[s.metadata.help_ref], table[s.metadata.unit_ref])
        for s in out.timeseries
    ]
    assert found == [
        (1, "Energy.", ""),
        (3, "Busy.", "seconds"),
        (3, "Busy.", "seconds"),
        (0, "", ""),
    ]
    assert done.dropped == 1


def test_2_0_metadata_becomes_1_0_metadata_per_family() -> None:
    table = ["", "__name__", "gpu_power_watts", "Power.", "watts", "gpu", "0", "1"]
    request = v2_pb2.Request(symbols=table)
    for gpu in (6, 7):
        series = request.timeseries.add(labels_refs=[1, 2, 5, gpu])
        series.metadata.type = 2  # type: ignore[assignment]
        series.metadata.help_ref, series.metadata.unit_ref = 3, 4
        series.samples.add(value=1.0, timestamp=1, start_timestamp=0)
    out = remote_pb2.WriteRequest.FromString(_rewrite(request.SerializeToString(), Version.V1).body)
    assert [(m.type, m.metric_family_name, m.help, m.unit) for m in out.metadata] == [
        (2, "gpu_power_watts", "Power.", "watts")
    ]


def test_2_0_histograms_lose_only_their_start_timestamp() -> None:
    request = v2_pb2.Request(symbols=["", "__name__", "h"])
    series = request.timeseries.add(labels_refs=[1, 2])
    histogram = series.histograms.add(
        count_int=4, sum=2.5, schema=-53, timestamp=9, start_timestamp=3
    )
    histogram.custom_values.extend([0.5, 1.0])
    histogram.positive_spans.add(offset=0, length=2)
    histogram.positive_deltas.extend([1, 2])
    done = _rewrite(request.SerializeToString(), Version.V1)
    (after,) = remote_pb2.WriteRequest.FromString(done.body).timeseries[0].histograms
    histogram.start_timestamp = 0
    assert after.SerializeToString() == histogram.SerializeToString()
    assert (done.histograms, done.dropped) == (1, 1)


@pytest.mark.parametrize(
    ("request_", "reason"),
    [
        (v2_pb2.Request(symbols=["x"]), "do not start with the empty string"),
        (v2_pb2.Request(symbols=["", "a"], timeseries=[{"labels_refs": [1, 2]}]), "symbol 2"),
        (v2_pb2.Request(symbols=["", "a"], timeseries=[{"labels_refs": [1]}]), "odd number"),
        (
            v2_pb2.Request(
                symbols=["", "a"], timeseries=[{"labels_refs": [1, 1], "metadata": {"help_ref": 7}}]
            ),
            "metadata help refers to symbol 7",
        ),
    ],
)
def test_bad_2_0_requests_say_why(request_: v2_pb2.Request, reason: str) -> None:
    for to in Version:
        with pytest.raises(BadRequest, match=reason):
            _rewrite(request_.SerializeToString(), to)


@given(st.binary(max_size=300), st.sampled_from(["v2", "v1", "upgrade"]))
def test_any_bytes_are_rewritten_or_a_bad_request(raw: bytes, how: str) -> None:
    try:
        if how == "upgrade":
            _upgrade(raw)
        else:
            _rewrite(raw, Version.V2 if how == "v2" else Version.V1)
    except BadRequest:
        pass
