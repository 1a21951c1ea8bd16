"""The socket's layout from BTF: a kernel-shaped BTF made here gives the program's macros, and
every doubt — a raw tracepoint missing, a member of another size, a bit field, the endpoints
spread out, a struct not beginning with the one it extends, no BTF at all — is a LayoutError
(the ordinary tracepoints are used then). The running kernel's layout is checked whole by
tests/netflow/test_loader.py, whose raw program reads real connections' endpoints and RTT."""

from __future__ import annotations

from pathlib import Path

import pytest

from lens.netflow import socklayout

from .btfwriter import BtfWriter


def _kernel(
    *,
    protocol_size: int = 2,
    tracepoints: tuple[str, ...] = tuple(socklayout.RAW_TRACEPOINTS),
    family_at: int = 16,
    sk_at: int = 0,
    changed: str = "",
) -> bytes:
    """The parts of a kernel's BTF the layout is read from, shaped as Linux 6.x's."""
    writer = BtfWriter()
    u8, u16, u32, u64 = (writer.add_int(f"u{bits}", bits // 8) for bits in (8, 16, 32, 64))
    addrs = writer.add_struct("", 8, [("skc_daddr", u32, 0), ("skc_rcv_saddr", u32, 32)])
    ports = writer.add_struct("", 4, [("skc_dport", u16, 0), ("skc_num", u16, 16)])
    in6 = writer.add_struct("in6_addr", 16, [("s6_addr", writer.add_array(u8, u32, 16), 0)])
    common = writer.add_struct("sock_common", 136, [
        ("", writer.add_struct("", 8, [("skc_addrpair", u64, 0), ("", addrs, 0)], union=True), 0),
        ("skc_hash", u32, 64),
        ("", writer.add_struct("", 4, [("skc_portpair", u32, 0), ("", ports, 0)], union=True), 96),
        ("skc_family", u16, family_at * 8),
        ("skc_v6_daddr", in6, 56 * 8),
        ("skc_v6_rcv_saddr", in6, 72 * 8),
    ])  # fmt: skip
    protocol = writer.add_int("proto", protocol_size)
    sock = writer.add_struct(
        "sock", 760, [("__sk_common", common, 0), ("sk_protocol", protocol, 532 * 8)]
    )
    inet = writer.add_struct("inet_sock", 976, [("sk", sock, sk_at * 8)])
    icsk = writer.add_struct("inet_connection_sock", 1400, [("icsk_inet", inet, 0)])
    writer.add_struct("tcp_sock", 2400, [("inet_conn", icsk, 0), ("srtt_us", u32, 1680 * 8)])
    skb = writer.add_pointer(writer.add_struct("sk_buff", 232, []))
    context, int_ = writer.add_pointer(0), writer.add_int("int", 4)
    arguments = [context, writer.add_pointer(sock), int_, int_]
    prototype = writer.add_pointer(writer.add_func_proto(0, arguments))
    other = writer.add_pointer(writer.add_func_proto(0, [context, skb]))  # `changed`'s
    for name in tracepoints:
        writer.add_typedef(f"btf_trace_{name}", other if name == changed else prototype)
    return writer.data()


def _layout(tmp_path: Path, data: bytes) -> socklayout.SockLayout:
    (tmp_path / "vmlinux").write_bytes(data)
    return socklayout.read_layout(tmp_path / "vmlinux")


def test_a_kernels_layout_becomes_the_programs_macros(tmp_path: Path) -> None:
    layout = _layout(tmp_path, _kernel())
    assert layout == socklayout.SockLayout(
        head_at=0, head_size=18, daddr=0, rcv_saddr=4, dport=12, num=14, family=16,
        v6_daddr=56, v6_rcv_saddr=72, protocol=532, srtt_us=1680,
    )  # fmt: skip
    flags = layout.cflags()
    assert flags[0] == "-DLENS_RAW=1"
    assert "-DLENS_OFF_SRTT_US=1680" in flags and "-DLENS_AT_FAMILY=16" in flags


def test_the_running_kernels_layout_is_read(tmp_path: Path) -> None:
    layout = socklayout.read_layout()
    assert (layout.head_at, layout.daddr, layout.dport, layout.num) == (0, 0, 12, 14)


@pytest.mark.parametrize(
    ("kernel", "message"),
    [
        (
            dict(tracepoints=tuple(socklayout.RAW_TRACEPOINTS)[:-1]),
            "raw tracepoints missing: tcp_destroy_sock",
        ),
        (
            dict(changed="tcp_probe"),
            r"raw tracepoint tcp_probe takes \(struct sk_buff \*\), not \(struct sock \*\)",
        ),
        (dict(protocol_size=1), r"unexpected size: sk_protocol \(1 bytes\)"),
        (dict(family_at=40), "the socket's endpoints span 42 bytes"),
        (dict(sk_at=8), "struct inet_sock does not begin with its sk"),
    ],
)
def test_any_doubt_is_a_layout_error(
    tmp_path: Path, kernel: dict[str, object], message: str
) -> None:
    with pytest.raises(socklayout.LayoutError, match=message):
        _layout(tmp_path, _kernel(**kernel))  # type: ignore[arg-type]


def test_no_btf_or_bad_btf_is_a_layout_error(tmp_path: Path) -> None:
    with pytest.raises(socklayout.LayoutError, match="no kernel BTF at"):
        socklayout.read_layout(tmp_path / "missing")
    with pytest.raises(socklayout.LayoutError, match="not BTF: bad magic"):
        _layout(tmp_path, b"\0" * 64)
