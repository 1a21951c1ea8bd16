"""Where a kernel struct's members lie, read from the kernel's own BTF (/sys/kernel/btf/vmlinux),
so the raw-tracepoint program reads `struct sock` at the running kernel's offsets — never at the
offsets of headers built for another kernel (docs/netflow.md).

The format is the kernel's Documentation/bpf/btf.rst: a header, a type section of variable-length
records numbered from 1, and a string section. Members of anonymous structs and unions are the
outer struct's (`skc_daddr` sits in two of them in `struct sock_common`).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from lens.runtime import errors

MAGIC = 0xEB9F
_HEADER = "HBBIIIII"  # magic, version, flags, hdr_len, type_off, type_len, str_off, str_len

# Kinds (btf.rst "Type encoding") and the bytes each record carries after its 12-byte head:
# a fixed extra, plus one entry of the given size for each of its `vlen` items.
_INT, _PTR, _ARRAY, _STRUCT, _UNION, _ENUM, _FWD, _TYPEDEF = 1, 2, 3, 4, 5, 6, 7, 8
_VOLATILE, _CONST, _RESTRICT, _FUNC_PROTO = 9, 10, 11, 13
_TYPE_TAG, _ENUM64 = 18, 19
_VAR, _DATASEC, _DECL_TAG = 14, 15, 17
_EXTRA = {_INT: 4, _ARRAY: 12, _VAR: 4, _DECL_TAG: 4}
_PER_ITEM = {_STRUCT: 12, _UNION: 12, _ENUM: 8, _FUNC_PROTO: 8, _DATASEC: 12, _ENUM64: 12}
_LAST_KIND = 19
MAX_MEMBERS_WALKED = 100_000  # struct sock and all it nests: some hundreds
# Qualifiers and names that stand for the type they point at.
_ALIASES = (_TYPEDEF, _VOLATILE, _CONST, _RESTRICT, _TYPE_TAG)


class BtfError(errors.SourceError):
    """The BTF is malformed, or lacks a struct or member asked for."""


@dataclass(frozen=True, slots=True)
class Member:
    """A member's place in its outermost struct: byte offset and size."""

    offset: int
    size: int


@dataclass(frozen=True, slots=True)
class _Type:
    kind: int
    name: str
    size_or_type: int  # a struct's or int's size; the type a typedef, pointer or qualifier names
    start: int  # where the record's items begin in the type section
    vlen: int
    kind_flag: bool


class Btf:
    """The types of one BTF blob, parsed once; `members(...)` answers for any struct in it."""

    def __init__(self, data: bytes) -> None:
        self._types, self._endian, self._strings = _parse(data)
        self._by_name: dict[str, list[int]] = {}
        self._typedef_ids: dict[str, list[int]] = {}
        for type_id, record in enumerate(self._types):
            if record is not None and record.kind == _STRUCT and record.name:
                self._by_name.setdefault(record.name, []).append(type_id)
            elif record is not None and record.kind == _TYPEDEF:
                self._typedef_ids.setdefault(record.name, []).append(type_id)
        self._data = data

    def has_typedef(self, name: str) -> bool:
        return name in self._typedef_ids

    def parameters(self, typedef: str, first: int) -> tuple[str, ...]:
        """The `first` parameters (at most) of the function pointer type `typedef` names, each
        as C spells its kind: `struct sock *`, `void *`, `int` (any 4-byte integer), `u16`...
        (as `btf_trace_<tracepoint>`: the raw tracepoint's context, then its arguments)."""
        ids = self._typedef_ids.get(typedef, [])
        if len(ids) != 1:
            raise BtfError(f"typedef {typedef} is defined {len(ids)} times in BTF")
        pointer = self._resolve(ids[0])
        prototype = self._resolve(pointer.size_or_type) if pointer.kind == _PTR else pointer
        if prototype.kind != _FUNC_PROTO:
            raise BtfError(f"typedef {typedef} is not a function pointer")
        spelled = []
        for index in range(min(prototype.vlen, first)):
            _name, param = self._unpack("II", prototype.start + 8 * index)
            spelled.append(self._spell(param))
        return tuple(spelled)

    def _spell(self, type_id: int) -> str:
        stars = ""
        for _ in range(8):  # pointers to pointers, bounded: BTF may be hostile
            type_id = self._strip(type_id)
            if type_id == 0:
                return "void" + stars
            record = self._record(type_id)
            if record.kind != _PTR:
                break
            stars, type_id = " *" + stars, record.size_or_type
        else:
            raise BtfError(f"BTF type {type_id}: pointers nested too deep")
        if record.kind == _STRUCT:
            return f"struct {record.name}{stars}"
        if record.kind == _INT:
            size = record.size_or_type
            return ("int" if size == 4 else f"u{size * 8}") + stars
        return f"kind {record.kind}{stars}"

    def members(self, struct_name: str, names: tuple[str, ...]) -> dict[str, Member]:
        """The named members of `struct_name`, looked for through its anonymous members too."""
        found = self._struct(struct_name)
        places: dict[str, Member] = {}
        self._collect(found, 0, set(names), places, [MAX_MEMBERS_WALKED], depth=0)
        missing = [name for name in names if name not in places]
        if missing:
            raise BtfError(f"struct {struct_name} has no member {', '.join(missing)} in BTF")
        return places

    def _struct(self, name: str) -> int:
        ids = self._by_name.get(name, [])
        if not ids:
            raise BtfError(f"no struct {name} in BTF")
        if len(ids) > 1:
            raise BtfError(f"struct {name} is defined {len(ids)} times in BTF")
        return ids[0]

    def _record(self, type_id: int) -> _Type:
        if not 0 < type_id < len(self._types) or self._types[type_id] is None:
            raise BtfError(f"BTF type {type_id} does not exist")
        record = self._types[type_id]
        assert record is not None
        return record

    def _resolve(self, type_id: int) -> _Type:
        """The type behind typedefs and qualifiers."""
        return self._record(self._strip(type_id))

    def _strip(self, type_id: int) -> int:
        """The id behind typedefs and qualifiers, 0 for void (a bounded chain: BTF may be
        hostile)."""
        for _ in range(64):
            if type_id == 0:
                return 0
            record = self._record(type_id)
            if record.kind not in _ALIASES:
                return type_id
            type_id = record.size_or_type
        raise BtfError(f"BTF type {type_id}: a chain of typedefs or qualifiers too long")

    def _size(self, type_id: int) -> int:
        count = 1
        for _ in range(16):  # arrays of arrays, bounded: BTF may be hostile
            record = self._resolve(type_id)
            if record.kind in (_INT, _STRUCT, _UNION, _ENUM, _ENUM64):
                return count * record.size_or_type
            if record.kind == _PTR:
                return count * 8
            if record.kind != _ARRAY:
                raise BtfError(f"BTF type {type_id} (kind {record.kind}) has no size")
            type_id, _index, elements = self._unpack("III", record.start)
            count *= elements
        raise BtfError(f"BTF type {type_id}: arrays nested too deep")

    def _collect(
        self,
        type_id: int,
        base: int,
        wanted: set[str],
        out: dict[str, Member],
        budget: list[int],
        depth: int,
    ) -> None:
        """`budget`: the members left to walk, shared by the whole walk — hostile BTF can
        nest one anonymous struct many times in each level, which depth alone does not bound."""
        if depth > 16:
            raise BtfError("BTF structs nested too deep")
        record = self._resolve(type_id)
        budget[0] -= record.vlen
        if budget[0] < 0:
            raise BtfError(f"BTF structs with more than {MAX_MEMBERS_WALKED} members to walk")
        for index in range(record.vlen):
            name_off, member_type, offset = self._unpack("III", record.start + 12 * index)
            bits, bitfield = (offset & 0xFFFFFF, offset >> 24) if record.kind_flag else (offset, 0)
            name = _string_in(self._data, self._strings, name_off)
            if not name and self._resolve(member_type).kind in (_STRUCT, _UNION):
                self._collect(member_type, base + bits // 8, wanted, out, budget, depth + 1)
            elif name in wanted and name not in out:
                if bitfield or bits % 8:
                    raise BtfError(f"member {name} is a bit field: its bytes cannot be read")
                out[name] = Member(offset=base + bits // 8, size=self._size(member_type))

    def _unpack(self, layout: str, at: int) -> tuple[int, ...]:
        try:
            return struct.unpack_from(self._endian + layout, self._data, at)
        except struct.error:
            raise BtfError(f"BTF record at byte {at} runs past the data") from None


def _header(data: bytes) -> tuple[str, tuple[int, ...]]:
    for endian in ("<", ">"):
        try:
            fields = struct.unpack_from(endian + _HEADER, data)
        except struct.error:
            raise BtfError(f"BTF too short for its header ({len(data)} bytes)") from None
        if fields[0] == MAGIC:
            return endian, fields
    raise BtfError("not BTF: bad magic")


def _parse(data: bytes) -> tuple[list[_Type | None], str, tuple[int, int]]:
    endian, (_magic, version, _flags, hdr_len, type_off, type_len, str_off, str_len) = _header(data)
    if version != 1:
        raise BtfError(f"BTF version {version} is not 1")
    types_start, strings_start = hdr_len + type_off, hdr_len + str_off
    if types_start + type_len > len(data) or strings_start + str_len > len(data):
        raise BtfError("BTF sections run past the data")
    strings = (strings_start, strings_start + str_len)
    head = struct.Struct(endian + "III")
    types: list[_Type | None] = [None]  # type 0 is void
    at, end = types_start, types_start + type_len
    while at < end:
        if at + 12 > end:
            raise BtfError(f"BTF type {len(types)} is cut off")
        name_off, info, size_or_type = head.unpack_from(data, at)
        kind, vlen = (info >> 24) & 0x1F, info & 0xFFFF
        if not 0 < kind <= _LAST_KIND:
            raise BtfError(f"BTF type {len(types)} has unknown kind {kind}")
        named = kind in (_STRUCT, _TYPEDEF)  # the only names asked for: spare decoding the rest
        name = _string_in(data, strings, name_off) if named else ""
        record = _Type(kind, name, size_or_type, at + 12, vlen, bool(info >> 31))
        types.append(record)
        at += 12 + _EXTRA.get(kind, 0) + _PER_ITEM.get(kind, 0) * vlen
    if at != end:
        raise BtfError("BTF type section ends inside a record")
    return types, endian, strings


def _string_in(data: bytes, strings: tuple[int, int], offset: int) -> str:
    start = strings[0] + offset
    if not strings[0] <= start < strings[1]:
        raise BtfError(f"BTF name offset {offset} is outside the string section")
    stop = data.find(b"\0", start, strings[1])
    if stop < 0:
        raise BtfError(f"BTF name at {offset} is not terminated")
    return data[start:stop].decode("ascii", "replace")
