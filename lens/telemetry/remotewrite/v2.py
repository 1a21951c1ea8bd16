"""Remote-write 2.0 bodies (io.prometheus.write.v2.Request) relabelled into 2.0 or 1.0, and 1.0
bodies converted into 2.0, through the protobuf classes, for rewriting.py. A 2.0 body written
here gets a symbol table of its own: the empty string, then each string in order of first use.

What one version cannot carry is counted in Rewritten.dropped and left out:
* 2.0 to 1.0: the start timestamp of a sample or histogram (1.0 has no field for it; the
  sample itself is kept). Series metadata becomes 1.0 metadata per metric family (the series'
  __name__), first series first.
* 1.0 to 2.0: a 1.0 metadata entry whose family names no series of the request (2.0 carries
  metadata only on series). A series named like the family, or like it plus a suffix of the
  classic histogram, summary or counter series (_bucket, _sum, _count, _total, ...), gets it.
"""

from __future__ import annotations

from google.protobuf.message import DecodeError

from lens.proto._generated.io.prometheus.write.v2 import types_pb2 as v2_pb2
from lens.proto._generated.prometheus import remote_pb2, types_pb2
from lens.telemetry.remotewrite import symbols, v1
from lens.telemetry.remotewrite.caching import LabelCache
from lens.telemetry.remotewrite.protocol import BadRequest, Labels, Relabeler, Rewritten, Version

_NAME = "__name__"
_FAMILY_SUFFIXES = ("_bucket", "_sum", "_count", "_total", "_created", "_info", "_gsum", "_gcount")
Metadata = tuple[int, str, str]  # type (the same numbers in both versions), help, unit


def parse(raw: bytes) -> v2_pb2.Request:
    """`raw` as a 2.0 Request; BadRequest with the reason if it is none, or if its symbol
    table does not start with the empty string."""
    try:
        request = v2_pb2.Request.FromString(raw)
    except DecodeError as exc:
        raise BadRequest(f"body is no io.prometheus.write.v2.Request: {exc}") from exc
    if request.symbols and request.symbols[0]:
        raise BadRequest("symbols do not start with the empty string")
    return request


def rewrite(
    raw: bytes,
    *,
    to: Version,
    cache: LabelCache[symbols.Flat, symbols.Entry],
    relabeler: Relabeler,
) -> Rewritten:
    """A 2.0 body relabelled into version `to`."""
    request = parse(raw)
    table = list(request.symbols)
    relabelling = symbols.Relabelling(cache, relabeler)
    writer = _V2Writer() if to is Version.V2 else _V1Writer()
    relabelled = 0
    for series in request.timeseries:
        flat = symbols.resolved(table, series.labels_refs, what="a series")
        final, changed = relabelling.entry(flat)
        relabelled += changed
        writer.add_v2(series, final, table)
    return writer.finish(relabelled=relabelled)


def upgrade(
    raw: bytes, *, cache: LabelCache[symbols.Flat, symbols.Entry], relabeler: Relabeler
) -> Rewritten:
    """A 1.0 body relabelled into 2.0, its metadata moved onto the series of its family."""
    request = v1.parse(raw)
    families = {
        entry.metric_family_name: (int(entry.type), entry.help, entry.unit)
        for entry in request.metadata
    }
    relabelling = symbols.Relabelling(cache, relabeler)
    writer = _V2Writer()
    relabelled = 0
    used: set[str] = set()
    for series in request.timeseries:
        flat = tuple(text for label in series.labels for text in (label.name, label.value))
        final, changed = relabelling.entry(flat)
        relabelled += changed
        family = _family(dict(final).get(_NAME, ""), families)
        used.add(family)
        writer.add_v1(series, final, families.get(family))
    writer.dropped += len(families.keys() - used)
    return writer.finish(relabelled=relabelled)


def _family(name: str, families: dict[str, Metadata]) -> str:
    """The metadata family a series of metric `name` belongs to ("" for none)."""
    if name in families:
        return name
    for suffix in _FAMILY_SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in families:
            return name[: -len(suffix)]
    return ""


class _Writer:
    """Series into an output body, counted."""

    def __init__(self) -> None:
        self.series = self.samples = self.histograms = self.exemplars = self.dropped = 0

    def count(self, samples: int, histograms: int, exemplars: int) -> None:
        self.series += 1
        self.samples += samples
        self.histograms += histograms
        self.exemplars += exemplars

    def rewritten(self, body: bytes, *, relabelled: int) -> Rewritten:
        return Rewritten(
            body=body,
            series=self.series,
            samples=self.samples,
            histograms=self.histograms,
            exemplars=self.exemplars,
            relabelled=relabelled,
            dropped=self.dropped,
        )


class _V2Writer(_Writer):
    """A 2.0 Request with a symbol table of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.request = v2_pb2.Request()
        self.table = symbols.Table()

    def add_v2(self, series: v2_pb2.TimeSeries, final: Labels, table: list[str]) -> None:
        out = self.request.timeseries.add()
        out.CopyFrom(series)
        out.labels_refs[:] = self.table.refs(final)
        for exemplar in out.exemplars:
            flat = symbols.resolved(table, exemplar.labels_refs, what="an exemplar")
            exemplar.labels_refs[:] = self.table.refs(symbols.pairs(flat))
        metadata = out.metadata
        metadata.help_ref = self._moved(table, metadata.help_ref, "metadata help")
        metadata.unit_ref = self._moved(table, metadata.unit_ref, "metadata unit")
        self.count(len(out.samples), len(out.histograms), len(out.exemplars))

    def _moved(self, table: list[str], ref: int, what: str) -> int:
        return self.table.ref(symbols.string(table, ref, what=what))

    def add_v1(self, series: types_pb2.TimeSeries, final: Labels, meta: Metadata | None) -> None:
        out = self.request.timeseries.add()
        out.labels_refs.extend(self.table.refs(final))
        for sample in series.samples:
            out.samples.add(value=sample.value, timestamp=sample.timestamp)
        for histogram in series.histograms:  # 1.0's fields 1-16 are 2.0's
            out.histograms.add().MergeFromString(histogram.SerializeToString())
        for exemplar in series.exemplars:
            refs = self.table.refs((label.name, label.value) for label in exemplar.labels)
            out.exemplars.add(labels_refs=refs, value=exemplar.value, timestamp=exemplar.timestamp)
        if meta is not None:
            kind, help_text, unit = meta
            out.metadata.type = kind  # type: ignore[assignment]  # the same numbers in 1.0
            out.metadata.help_ref = self.table.ref(help_text)
            out.metadata.unit_ref = self.table.ref(unit)
        self.count(len(out.samples), len(out.histograms), len(out.exemplars))

    def finish(self, *, relabelled: int) -> Rewritten:
        self.request.symbols.extend(self.table.strings)
        self.request.DiscardUnknownFields()
        return self.rewritten(self.request.SerializeToString(), relabelled=relabelled)


class _V1Writer(_Writer):
    """A 1.0 WriteRequest, series metadata as its metadata per family."""

    def __init__(self) -> None:
        super().__init__()
        self.request = remote_pb2.WriteRequest()
        self.families: dict[str, Metadata] = {}

    def add_v2(self, series: v2_pb2.TimeSeries, final: Labels, table: list[str]) -> None:
        out = self.request.timeseries.add()
        for name, value in final:
            out.labels.add(name=name, value=value)
        for sample in series.samples:
            out.samples.add(value=sample.value, timestamp=sample.timestamp)
            self.dropped += sample.start_timestamp != 0
        for histogram in series.histograms:  # fields 1-16 are 1.0's; 17 goes with the unknowns
            out.histograms.add().MergeFromString(histogram.SerializeToString())
            self.dropped += histogram.start_timestamp != 0
        for exemplar in series.exemplars:
            flat = symbols.resolved(table, exemplar.labels_refs, what="an exemplar")
            copy = out.exemplars.add(value=exemplar.value, timestamp=exemplar.timestamp)
            for name, value in symbols.pairs(flat):
                copy.labels.add(name=name, value=value)
        self._note(series.metadata, dict(final).get(_NAME, ""), table)
        self.count(len(out.samples), len(out.histograms), len(out.exemplars))

    def _note(self, metadata: v2_pb2.Metadata, family: str, table: list[str]) -> None:
        help_text = symbols.string(table, metadata.help_ref, what="metadata help")
        unit = symbols.string(table, metadata.unit_ref, what="metadata unit")
        if family and family not in self.families and (metadata.type or help_text or unit):
            self.families[family] = (int(metadata.type), help_text, unit)

    def finish(self, *, relabelled: int) -> Rewritten:
        for family, (kind, help_text, unit) in self.families.items():
            self.request.metadata.add(
                type=kind,  # the same numbers in 2.0
                metric_family_name=family,
                help=help_text,
                unit=unit,
            )
        self.request.DiscardUnknownFields()
        return self.rewritten(self.request.SerializeToString(), relabelled=relabelled)
