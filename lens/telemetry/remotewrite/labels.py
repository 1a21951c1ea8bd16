"""Label sets as the remote-write specs want them (names sorted bytewise, none twice, none
empty, no empty value), checked on the way in, normalised on the way out of a Relabeler, and
encoded as 1.0 TimeSeries.labels fields; the rewriting modules (v1.py, v2.py) use them."""

from __future__ import annotations

from collections.abc import Iterable

from lens.telemetry.remotewrite import wire
from lens.telemetry.remotewrite.protocol import BadRequest, Labels, Relabeler

_LABEL_TAG = b"\x0a"  # TimeSeries.labels and Exemplar.labels: field 1, length-delimited
_NAME_TAG = b"\x0a"  # Label.name: field 1, length-delimited
_VALUE_TAG = b"\x12"  # Label.value: field 2, length-delimited


def checked(pairs: Iterable[tuple[str, str]]) -> Labels:
    """A received label set as Labels: sorted (senders must sort, but a receiver that sorts
    loses nothing), empty values dropped (Prometheus reads them as no label). BadRequest for
    an empty name or a name given twice, which the specs forbid outright."""
    ordered = sorted(pairs)
    previous = None
    for name, _ in ordered:
        if not name:
            raise BadRequest("a label has an empty name")
        if name == previous:
            raise BadRequest(f"label {name!r} appears twice in one series")
        previous = name
    return tuple(pair for pair in ordered if pair[1])


def normalized(pairs: Iterable[tuple[str, str]]) -> Labels:
    """A Relabeler's answer as Labels whatever its order: a later pair of the same name wins,
    pairs with an empty name or value are left out."""
    merged = {name: value for name, value in pairs if name}
    return tuple(sorted((name, value) for name, value in merged.items() if value))


def relabelled(pairs: Iterable[tuple[str, str]], relabeler: Relabeler) -> tuple[Labels, bool]:
    """The labels a received series is sent with, and whether the Relabeler changed them."""
    received = checked(pairs)
    answer = relabeler.relabel(received)
    final = received if answer is None else normalized(answer)
    return final, final != received


def encode(labels: Labels) -> bytes:
    """`labels` as the repeated `labels` field (1) of a 1.0 TimeSeries or Exemplar, each Label
    with its name (1) and value (2), as protobuf encoders write them."""
    parts: list[bytes] = []
    for name, value in labels:
        label = _string(_NAME_TAG, name) + _string(_VALUE_TAG, value)
        parts += (_LABEL_TAG, wire.encode_varint(len(label)), label)
    return b"".join(parts)


def _string(tag: bytes, text: str) -> bytes:
    """A string field, left out when empty as proto3 encoders do."""
    data = text.encode()
    return tag + wire.encode_varint(len(data)) + data if data else b""
