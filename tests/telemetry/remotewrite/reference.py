"""Test helpers for the remote-write codec: a small Relabeler, a slow reference rewrite through
the protobuf classes (written from the specs, sharing no code with lens), and hypothesis
strategies for 1.0 and 2.0 requests built with the generated classes."""

from __future__ import annotations

import threading

from hypothesis import strategies as st

from lens.proto._generated.io.prometheus.write.v2 import types_pb2 as v2_pb2
from lens.proto._generated.prometheus import remote_pb2, types_pb2
from lens.telemetry.remotewrite.protocol import BadRequest, Labels

WORKLOAD = (("namespace", "ml"), ("pod", "llama-0"), ("workload_kind", "PyTorchJob"))


class GpuRelabeler:
    """Adds WORKLOAD (or `extra`) to series with a `gpu` label, counts its calls."""

    def __init__(self, extra: Labels = WORKLOAD) -> None:
        self.extra = extra
        self.calls = 0
        self._generation = 0
        self._lock = threading.Lock()

    def generation(self) -> int:
        return self._generation

    def relabel(self, labels: Labels) -> Labels | None:
        with self._lock:
            self.calls += 1
        if not any(name == "gpu" for name, _ in labels):
            return None
        return labels + self.extra

    def change(self, extra: Labels) -> None:
        self.extra = extra
        self._generation += 1


def expected_labels(pairs: list[tuple[str, str]], relabeler: GpuRelabeler) -> Labels:
    """What the specs and the Rewriter's contract make of a received label list."""
    names = [name for name, _ in pairs]
    if "" in names or len(set(names)) != len(names):
        raise BadRequest("empty or repeated label name")
    received = tuple(sorted(pair for pair in pairs if pair[1]))
    answer = relabeler.relabel(received)
    if answer is None:
        return received
    merged = dict(pair for pair in answer if pair[0])
    return tuple(sorted(pair for pair in merged.items() if pair[1]))


def reference_v1(raw: bytes, relabeler: GpuRelabeler) -> bytes:
    """The straightforward rewrite: parse, relabel each series, serialize."""
    request = remote_pb2.WriteRequest.FromString(raw)
    request.DiscardUnknownFields()
    for series in request.timeseries:
        final = expected_labels([(x.name, x.value) for x in series.labels], relabeler)
        del series.labels[:]
        series.labels.extend(types_pb2.Label(name=name, value=value) for name, value in final)
    return request.SerializeToString()


# --- strategies ---------------------------------------------------------------------------

_NAMES = st.sampled_from(["__name__", "gpu", "UUID", "job", "instance", "le", "é", "a" * 130, ""])
_VALUES = st.sampled_from(["", "0", "7", "DCGM_FI_DEV_GPU_UTIL", "ü", "x" * 200, "pod"])
_FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, -0.0, 1.0])
_TIMES = st.integers(-(2**63), 2**63 - 1) | st.integers(1_700_000_000_000, 1_900_000_000_000)
label_lists = st.lists(st.tuples(_NAMES, _VALUES), max_size=6)


@st.composite
def v1_series(draw: st.DrawFn) -> types_pb2.TimeSeries:
    series = types_pb2.TimeSeries()
    for name, value in draw(label_lists):
        series.labels.add(name=name, value=value)
    for _ in range(draw(st.integers(0, 3))):
        series.samples.add(value=draw(_FLOATS), timestamp=draw(_TIMES))
    for _ in range(draw(st.integers(0, 1))):
        exemplar = series.exemplars.add(value=draw(_FLOATS), timestamp=draw(_TIMES))
        exemplar.labels.add(name="trace_id", value=draw(_VALUES))
    for _ in range(draw(st.integers(0, 1))):
        histogram = series.histograms.add(count_int=draw(st.integers(0, 99)), sum=draw(_FLOATS))
        histogram.positive_spans.add(offset=draw(st.integers(-5, 5)), length=1)
        histogram.positive_deltas.append(draw(st.integers(-9, 9)))
        histogram.timestamp = draw(_TIMES)
    return series


@st.composite
def v1_requests(draw: st.DrawFn) -> remote_pb2.WriteRequest:
    request = remote_pb2.WriteRequest(timeseries=draw(st.lists(v1_series(), max_size=6)))
    for family in draw(st.lists(st.sampled_from(["up", "gpu_util", "x"]), max_size=2)):
        request.metadata.add(type=1, metric_family_name=family, help="help", unit="")
    return request


@st.composite
def v2_requests(draw: st.DrawFn) -> v2_pb2.Request:
    """A 2.0 request whose references all point into its table (the table may hold strings
    no series uses, and repeat none)."""
    table: list[str] = [""]

    def ref(text: str) -> int:
        if text not in table:
            table.append(text)
        return table.index(text)

    request = v2_pb2.Request()
    for _ in range(draw(st.integers(0, 5))):
        series = request.timeseries.add()
        for name, value in draw(label_lists):
            series.labels_refs.extend([ref(name), ref(value)])
        for _ in range(draw(st.integers(0, 2))):
            series.samples.add(
                value=draw(_FLOATS),
                timestamp=draw(_TIMES),
                start_timestamp=draw(st.sampled_from([0, 1_700_000_000_000])),
            )
        for _ in range(draw(st.integers(0, 1))):
            refs = [ref("trace_id"), ref(draw(_VALUES))]
            series.exemplars.add(labels_refs=refs, value=draw(_FLOATS), timestamp=draw(_TIMES))
        series.metadata.type = draw(st.integers(0, 7))  # type: ignore[assignment]
        series.metadata.help_ref = ref(draw(st.sampled_from(["", "Help."])))
    request.symbols.extend(table)
    return request
