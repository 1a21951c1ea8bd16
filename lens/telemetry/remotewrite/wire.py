"""Protobuf wire-format pieces the 1.0 fast path (v1.py) reads and writes by hand: varints,
field skipping and the `tag + length` head of a length-delimited field. Callers read only
bodies the protobuf parser has already accepted, so these never see truncated data."""

from __future__ import annotations

VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
FIXED32 = 5
_FIXED_SIZES = {FIXED64: 8, FIXED32: 4}
_ONE_BYTE = 0x80
HEADS_BUILT = 0x1000

# `0x0a + length` heads of field 1 for the lengths a series has (a dcgm-exporter series with
# workload labels is about 500 bytes), built once: the fast path emits one per relabelled series.
FIELD1_HEADS = tuple(
    b"\x0a" + bytes((n,)) if n < _ONE_BYTE else bytes((0x0A, n & 0x7F | 0x80, n >> 7))
    for n in range(HEADS_BUILT)
)


def encode_varint(value: int) -> bytes:
    """`value` (0 ≤ value < 2**64) as a base-128 varint."""
    out = bytearray()
    while value >= _ONE_BYTE:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at `pos` and the position after it."""
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < _ONE_BYTE:
            return value, pos
        shift += 7


def field1_head(length: int) -> bytes:
    """Tag and length of a length-delimited field 1 whose content is `length` bytes."""
    if length < HEADS_BUILT:
        return FIELD1_HEADS[length]
    return b"\x0a" + encode_varint(length)


def skip_field(data: bytes, pos: int) -> int | None:
    """The position after the field whose tag is at `pos`, or None for a group (wire types 3
    and 4, which only the protobuf parser walks)."""
    tag, pos = read_varint(data, pos)
    wire_type = tag & 7
    if wire_type == VARINT:
        return read_varint(data, pos)[1]
    if wire_type == LENGTH_DELIMITED:
        length, pos = read_varint(data, pos)
        return pos + length
    size = _FIXED_SIZES.get(wire_type)
    return None if size is None else pos + size
