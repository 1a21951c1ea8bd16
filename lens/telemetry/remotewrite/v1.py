"""Remote-write 1.0 bodies (prometheus.WriteRequest) relabelled into 1.0 at the wire level, for
rewriting.py: the protobuf parser checks the body once (all but the labels: shallow.py), then
each TimeSeries is copied as bytes with only its labels swapped, and the swap comes from a
cache keyed by the series' raw label bytes, so a series seen before costs a slice and a dict
lookup. Label bytes are checked (Label messages, UTF-8, names) when they enter the cache.

Labels must come first in a series and be followed only by samples, exemplars and histograms
(as every encoder writes them); a body with another layout or unknown fields is re-encoded by
the protobuf classes first. Metadata (field 3) passes as received; unknown fields are dropped.
"""

from __future__ import annotations

from google.protobuf.message import DecodeError

from lens.proto._generated.prometheus import remote_pb2, types_pb2
from lens.telemetry.remotewrite import labels, shallow, wire
from lens.telemetry.remotewrite.caching import LabelCache
from lens.telemetry.remotewrite.protocol import BadRequest, Relabeler, Rewritten

Entry = tuple[bytes | None, bool]
"""A cached answer: the series' new label bytes (None: keep the received ones), and whether
the Relabeler changed the label set (rather than only its order or empty values)."""

_SERIES = 0x0A  # WriteRequest.timeseries, TimeSeries.labels
_METADATA = 0x1A  # WriteRequest.metadata
_SAMPLE = 0x12  # TimeSeries.samples
_EXEMPLAR = 0x1A  # TimeSeries.exemplars
_HISTOGRAM = 0x22  # TimeSeries.histograms
_ONE_BYTE = 0x80
# The usual tail of a series, one sample with a value and a millisecond timestamp of 6 varint
# bytes: 0x12 len 0x09 <8 bytes> 0x10 <6 bytes>. Without a value (0.0) it is 9 bytes shorter.
_ONE_SAMPLE = 18
_NO_VALUE = 9


class _IrregularError(Exception):
    """The body is valid but laid out unlike an encoder's output."""


def parse(raw: bytes) -> remote_pb2.WriteRequest:
    """`raw` as a WriteRequest; BadRequest with the parser's reason if it is none."""
    try:
        return remote_pb2.WriteRequest.FromString(raw)
    except DecodeError as exc:
        raise BadRequest(f"body is no prometheus.WriteRequest: {_reason(exc)}") from exc


def _reason(exc: DecodeError) -> str:
    """The parser's reason without the name of the message type it was parsing."""
    return str(exc).rpartition("': ")[2]


def rewrite(raw: bytes, *, cache: LabelCache[bytes, Entry], relabeler: Relabeler) -> Rewritten:
    """`raw` with every series relabelled, as a 1.0 body."""
    try:
        shallow.check(raw)
        return _Pass(raw, cache, relabeler).run()
    except DecodeError as exc:
        raise BadRequest(f"body is no prometheus.WriteRequest: {_reason(exc)}") from exc
    except _IrregularError:
        message = parse(raw)
    message.DiscardUnknownFields()
    try:
        return _Pass(message.SerializeToString(), cache, relabeler).run()
    except _IrregularError as exc:  # pragma: no cover - an encoder's own output is regular
        raise BadRequest("body has a layout this receiver cannot read") from exc


class _Pass:
    """One walk over a body; the hot loop is run(), the rest serves its misses."""

    def __init__(self, raw: bytes, cache: LabelCache[bytes, Entry], relabeler: Relabeler):
        self.raw = raw
        self.cache = cache
        self.relabeler = relabeler
        self.guess = _ONE_SAMPLE
        self.walked = self.samples = self.exemplars = self.histograms = 0

    def run(self) -> Rewritten:
        raw, young, guess, heads = self.raw, self.cache.begin(), self.guess, wire.FIELD1_HEADS
        parts: list[bytes] = []
        kept = pos = guessed = relabelled = 0
        size = len(raw)
        # Tags and offsets are literals here: module constants would be global lookups in the
        # loop every series passes (0x0A: a series, 0x12: a sample; see the constants above).
        while pos < size:
            if raw[pos] != 0x0A:
                pos, kept = self._other(pos, kept, parts)
                continue
            length = raw[pos + 1]
            start = pos + 2
            if length > 0x7F:
                if raw[pos + 2] > 0x7F:
                    length, start = wire.read_varint(raw, pos + 1)
                else:
                    length, start = length - 0x80 + (raw[pos + 2] << 7), pos + 3
            end = start + length
            # A guessed cut is right when the labels before it are a cached key (a whole label
            # run) and one sample field fills the rest exactly.
            cut = end - guess
            entry: Entry | None = None
            if cut >= start and raw[cut] == 0x12 and raw[cut + 1] == guess - 2:
                entry = young.get(raw[start:cut])
            elif cut + 9 >= start and raw[cut + 9] == 0x12 and raw[cut + 10] == guess - 11:
                cut += 9
                entry = young.get(raw[start:cut])
            if entry is None:
                entry, cut = self._series(start, end)
                guess = self.guess
            else:
                guessed += 1
            new, changed = entry
            if new is not None:
                length = len(new) + end - cut
                head = heads[length] if length < 0x1000 else wire.field1_head(length)
                parts += (raw[kept:pos], head, new, raw[cut:end])
                kept = end
                relabelled += changed
            pos = end
        parts.append(raw[kept:])
        return Rewritten(
            body=b"".join(parts),
            series=self.walked + guessed,
            samples=self.samples + guessed,
            histograms=self.histograms,
            exemplars=self.exemplars,
            relabelled=relabelled,
        )

    def _other(self, pos: int, kept: int, parts: list[bytes]) -> tuple[int, int]:
        """Past a field that is no series: metadata stays where it is, unknown fields go.
        Series or metadata under a tag of another wire type or spelled in more bytes than
        needed are the protobuf classes' to read."""
        raw = self.raw
        after = wire.skip_field(raw, pos)
        if raw[pos] == _METADATA and after is not None:
            return after, kept
        if after is None or wire.read_varint(raw, pos)[0] >> 3 in _KNOWN_FIELDS:
            raise _IrregularError
        parts.append(raw[kept:pos])
        return after, after

    def _series(self, start: int, end: int) -> tuple[Entry, int]:
        """The entry of the series in raw[start:end] and where its labels end, found by walking
        its fields; counts what follows the labels."""
        raw = self.raw
        pos = start
        while pos < end and raw[pos] == _SERIES:
            pos = _after_length(raw, pos + 1)
        cut = pos
        counts = [0, 0, 0]
        while pos < end:
            tag = raw[pos]
            if tag not in _TAIL_FIELDS:
                raise _IrregularError
            counts[_TAIL_FIELDS[tag]] += 1
            pos = _after_length(raw, pos + 1)
        self.walked += 1
        self.samples += counts[0]
        self.exemplars += counts[1]
        self.histograms += counts[2]
        if counts == [1, 0, 0]:
            has_value = end - cut > 2 and raw[cut + 2] == 0x09
            guess = end - cut + (0 if has_value else _NO_VALUE)
            # run() reads the guessed sample's length as one byte: a longer one would be a
            # varint whose first byte proves nothing about where the sample ends.
            if guess - 2 < _ONE_BYTE:
                self.guess = guess
        return self.cache.fill(raw[start:cut], self._relabelled), cut

    def _relabelled(self, key: bytes) -> Entry:
        """What the Relabeler makes of the label fields `key`."""
        try:
            series = types_pb2.TimeSeries.FromString(key)
        except DecodeError as exc:
            raise BadRequest(f"a series' labels are no Label messages: {_reason(exc)}") from exc
        final, changed = labels.relabelled(
            ((x.name, x.value) for x in series.labels), self.relabeler
        )
        encoded = labels.encode(final)
        return (None if encoded == key else encoded, changed)


_TAIL_FIELDS = {_SAMPLE: 0, _EXEMPLAR: 1, _HISTOGRAM: 2}
_KNOWN_FIELDS = (1, 3)  # WriteRequest.timeseries, WriteRequest.metadata


def _after_length(raw: bytes, pos: int) -> int:
    """The end of the length-delimited content whose length varint is at `pos`."""
    length = raw[pos]
    if length < _ONE_BYTE:
        return pos + 1 + length
    length, pos = wire.read_varint(raw, pos)
    return pos + length
