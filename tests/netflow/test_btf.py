"""The BTF parser: members found through anonymous structs and unions, typedefs and qualifiers,
in either byte order; a missing, doubled or bit-field member named; any bytes at all a BtfError
or an answer, never another exception; and the running kernel's own BTF read right."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.netflow import btf

from .btfwriter import BtfWriter

VMLINUX = Path("/sys/kernel/btf/vmlinux")


def _endpoints(endian: str = "<") -> BtfWriter:
    """`struct pair` as the kernel's sock_common begins: an anonymous union of a u64 and an
    anonymous struct of two u32, then a typedef'd const u16, then an array of 4 u32."""
    writer = BtfWriter(endian)
    u32, u64, u16 = writer.add_int("u32", 4), writer.add_int("u64", 8), writer.add_int("u16", 2)
    inner = writer.add_struct("", 8, [("daddr", u32, 0), ("saddr", u32, 32)])
    union = writer.add_struct("", 8, [("both", u64, 0), ("", inner, 0)], union=True)
    port = writer.add_typedef("__be16", writer.add_const(u16))
    words = writer.add_array(u32, u32, 4)
    writer.add_struct("pair", 28, [("", union, 0), ("port", port, 64), ("v6", words, 96)])
    return writer


@pytest.mark.parametrize("endian", ["<", ">"])
def test_members_are_found_through_anonymous_unions_and_typedefs(endian: str) -> None:
    types = btf.Btf(_endpoints(endian).data())
    assert types.members("pair", ("saddr", "daddr", "port", "v6", "both")) == {
        "daddr": btf.Member(offset=0, size=4),
        "saddr": btf.Member(offset=4, size=4),
        "port": btf.Member(offset=8, size=2),
        "v6": btf.Member(offset=12, size=16),
        "both": btf.Member(offset=0, size=8),
    }


def test_a_missing_struct_or_member_is_named() -> None:
    types = btf.Btf(_endpoints().data())
    with pytest.raises(btf.BtfError, match="no struct sock in BTF"):
        types.members("sock", ("sk_protocol",))
    with pytest.raises(btf.BtfError, match="struct pair has no member dport"):
        types.members("pair", ("port", "dport"))


def test_a_struct_defined_twice_is_not_guessed_at() -> None:
    writer = _endpoints()
    writer.add_struct("pair", 4, [])
    with pytest.raises(btf.BtfError, match="struct pair is defined 2 times"):
        btf.Btf(writer.data()).members("pair", ("port",))


def test_a_bit_field_cannot_be_read_as_bytes() -> None:
    writer = BtfWriter()
    u16 = writer.add_int("u16", 2)
    writer.add_struct("old_sock", 4, [("sk_type", u16, 0), ("sk_protocol", u16, 16)],
                      bitfields={"sk_protocol": 8})  # fmt: skip
    with pytest.raises(btf.BtfError, match="sk_protocol is a bit field"):
        btf.Btf(writer.data()).members("old_sock", ("sk_protocol",))


def test_typedefs_are_known_by_name() -> None:
    writer = _endpoints()
    writer.add_typedef("btf_trace_tcp_probe", writer.add_pointer(writer.add_func_proto(0, [1])))
    types = btf.Btf(writer.data())
    assert types.has_typedef("btf_trace_tcp_probe") and types.has_typedef("__be16")
    assert not types.has_typedef("btf_trace_tcp_bad_csum")


def test_a_function_pointers_parameters_are_spelled() -> None:
    writer = _endpoints()
    u16, array, pair = 3, 8, 9  # _endpoints' types
    pointer = writer.add_pointer(writer.add_pointer(pair))
    arguments = [writer.add_pointer(0), writer.add_pointer(pair), u16, pointer, array]
    writer.add_typedef("btf_trace_x", writer.add_pointer(writer.add_func_proto(0, arguments)))
    writer.add_typedef("not_a_function", pair)
    types = btf.Btf(writer.data())
    assert types.parameters("btf_trace_x", 9) == (
        "void *", "struct pair *", "u16", "struct pair * *", "kind 3",
    )  # fmt: skip
    with pytest.raises(btf.BtfError, match="not_a_function is not a function pointer"):
        types.parameters("not_a_function", 1)
    with pytest.raises(btf.BtfError, match="typedef btf_trace_y is defined 0 times"):
        types.parameters("btf_trace_y", 1)


def test_a_typedef_loop_is_an_error_not_a_hang() -> None:
    writer = BtfWriter()
    writer.add_typedef("a", 2)
    writer.add_typedef("b", 1)
    writer.add_struct("s", 4, [("x", 1, 0)])
    with pytest.raises(btf.BtfError, match="too long"):
        btf.Btf(writer.data()).members("s", ("x",))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda data: data[:10], "too short"),
        (lambda data: b"\0\0" + data[2:], "bad magic"),
        (lambda data: data[:-5], "run past the data"),
        (lambda data: data[:2] + b"\x02" + data[3:], "version 2"),
    ],
)
def test_a_damaged_blob_says_what_is_wrong(damage: object, message: str) -> None:
    data = _endpoints().data()
    with pytest.raises(btf.BtfError, match=message):
        btf.Btf(damage(data))  # type: ignore[operator]


@given(st.binary(max_size=400))
def test_any_bytes_are_btf_or_a_btf_error(data: bytes) -> None:
    with contextlib.suppress(btf.BtfError):
        btf.Btf(data).members("pair", ("port",))


@given(st.data())
def test_a_blob_damaged_anywhere_is_an_answer_or_a_btf_error(data: st.DataObject) -> None:
    blob = bytearray(_endpoints().data())
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(blob) - 1))
        blob[at] = data.draw(st.integers(0, 255))
    with contextlib.suppress(btf.BtfError):
        types = btf.Btf(bytes(blob))
        types.members("pair", ("daddr", "port", "v6"))
        types.has_typedef("__be16")
        types.parameters("__be16", 2)


def test_the_running_kernels_socket_endpoints_lie_where_they_always_have() -> None:
    """struct sock_common's first members have kept their places since Linux 2.6."""
    types = btf.Btf(VMLINUX.read_bytes())
    found = types.members("sock_common", ("skc_daddr", "skc_rcv_saddr", "skc_dport", "skc_num"))
    assert [(member.offset, member.size) for member in found.values()] == [
        (0, 4), (4, 4), (12, 2), (14, 2)
    ]  # fmt: skip


def test_anonymous_structs_nested_many_times_over_are_a_bounded_walk() -> None:
    """Twelve anonymous members at each of ten levels would be 12**10 to walk."""
    writer = BtfWriter()
    level = writer.add_int("u8", 1)
    level = writer.add_struct("", 1, [("x", level, 0)])
    for _ in range(10):
        level = writer.add_struct("", 1, [("", level, 0)] * 12)
    writer.add_struct("hostile", 1, [("", level, 0)])
    with pytest.raises(btf.BtfError, match="more than 100000 members to walk"):
        btf.Btf(writer.data()).members("hostile", ("y",))


def test_a_const_void_pointer_is_a_void_pointer() -> None:
    writer = BtfWriter()
    const_void = writer.add_pointer(writer.add_const(0))
    writer.add_typedef("f", writer.add_pointer(writer.add_func_proto(0, [const_void, const_void])))
    assert btf.Btf(writer.data()).parameters("f", 1) == ("void *",)
