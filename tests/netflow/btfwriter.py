"""BTF blobs made by tests, in the kernel's encoding (Documentation/bpf/btf.rst): types added one
by one, each `add_*` returning its type id, and `data()` the blob with header and strings."""

from __future__ import annotations

import struct

INT, PTR, ARRAY, STRUCT, UNION, TYPEDEF, CONST, FUNC_PROTO = 1, 2, 3, 4, 5, 8, 10, 13

Member = tuple[str, int, int]  # name ("" for anonymous), type id, offset in bits


class BtfWriter:
    def __init__(self, endian: str = "<") -> None:
        self.endian = endian
        self._types: list[bytes] = []
        self._strings = bytearray(b"\0")

    def name(self, text: str) -> int:
        if not text:
            return 0
        offset = len(self._strings)
        self._strings += text.encode() + b"\0"
        return offset

    def _add(self, name: str, kind: int, vlen: int, size_or_type: int, tail: bytes = b"",
             kind_flag: bool = False) -> int:  # fmt: skip
        info = (kind << 24) | vlen | (1 << 31 if kind_flag else 0)
        head = struct.pack(self.endian + "III", self.name(name), info, size_or_type)
        self._types.append(head + tail)
        return len(self._types)

    def add_int(self, name: str, size: int) -> int:
        return self._add(name, INT, 0, size, struct.pack(self.endian + "I", size * 8))

    def add_typedef(self, name: str, target: int) -> int:
        return self._add(name, TYPEDEF, 0, target)

    def add_const(self, target: int) -> int:
        return self._add("", CONST, 0, target)

    def add_pointer(self, target: int) -> int:
        return self._add("", PTR, 0, target)

    def add_array(self, element: int, index: int, count: int) -> int:
        return self._add("", ARRAY, 0, 0, struct.pack(self.endian + "III", element, index, count))

    def add_func_proto(self, returns: int, params: list[int]) -> int:
        tail = b"".join(struct.pack(self.endian + "II", 0, param) for param in params)
        return self._add("", FUNC_PROTO, len(params), returns, tail)

    def add_struct(self, name: str, size: int, members: list[Member], *, union: bool = False,
                   bitfields: dict[str, int] | None = None) -> int:  # fmt: skip
        """`bitfields`: member name to its width in bits (the struct gets kind_flag)."""
        widths = bitfields or {}
        layout = self.endian + "III"
        tail = b"".join(
            struct.pack(layout, self.name(member), type_id, (widths.get(member, 0) << 24) | bits)
            for member, type_id, bits in members
        )
        kind = UNION if union else STRUCT
        return self._add(name, kind, len(members), size, tail, kind_flag=bool(widths))

    def data(self) -> bytes:
        types = b"".join(self._types)
        header = struct.pack(
            self.endian + "HBBIIIII", 0xEB9F, 1, 0, 24, 0, len(types), len(types),
            len(self._strings),
        )  # fmt: skip
        return header + types + bytes(self._strings)
