"""Where the raw-tracepoint program (bpf/flows.c, LENS_RAW) finds what it reads of a socket on
the running kernel: the endpoints, family and protocol of `struct sock`, and the smoothed RTT of
`struct tcp_sock`, from the kernel's BTF. Any doubt (no BTF, a member missing, moved out of the
first bytes, of another size) is a LayoutError, and the program attaches to the ordinary
tracepoints instead, which need no layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lens.netflow import btf
from lens.runtime import errors

VMLINUX = Path("/sys/kernel/btf/vmlinux")
# The members the program reads at the start of `struct sock_common`, read there at once.
HEAD = ("skc_daddr", "skc_rcv_saddr", "skc_dport", "skc_num", "skc_family")
HEAD_MAX = 32  # bytes: one short read; they have lain in the first 18 since Linux 2.6
V6 = ("skc_v6_daddr", "skc_v6_rcv_saddr")
SIZES = {
    "skc_daddr": 4,
    "skc_rcv_saddr": 4,
    "skc_dport": 2,
    "skc_num": 2,
    "skc_family": 2,
    "skc_v6_daddr": 16,
    "skc_v6_rcv_saddr": 16,
    "sk_protocol": 2,
    "srtt_us": 4,
}
# A tcp_sock begins with its inet_connection_sock, which begins with its inet_sock, which
# begins with its sock: the kernel casts between them, and so does the program.
NESTING = (
    ("tcp_sock", "inet_conn"),
    ("inet_connection_sock", "icsk_inet"),
    ("inet_sock", "sk"),
)
# The raw tracepoints the program attaches to, and the arguments it reads of each (the first
# ones; BTF names each one's prototype btf_trace_<name>, after a context pointer).
RAW_TRACEPOINTS = {
    "inet_sock_set_state": ("struct sock *", "int", "int"),  # sk, oldstate, newstate
    "sock_send_length": ("struct sock *", "int"),  # sk, ret
    "sock_recv_length": ("struct sock *", "int", "int"),  # sk, ret, flags (MSG_PEEK)
    "tcp_probe": ("struct sock *",),
    "tcp_retransmit_skb": ("struct sock *",),
    "tcp_destroy_sock": ("struct sock *",),
}


class LayoutError(errors.SourceError):
    """The socket's layout cannot be known for certain here; the message says why."""


@dataclass(frozen=True, slots=True)
class SockLayout:
    """Byte offsets from a socket's address (`head_at` and the `v6_`, `protocol` and `srtt_us`
    ones), and each head member's place within the head's `head_size` bytes."""

    head_at: int
    head_size: int
    daddr: int
    rcv_saddr: int
    dport: int
    num: int
    family: int
    v6_daddr: int
    v6_rcv_saddr: int
    protocol: int
    srtt_us: int

    def cflags(self) -> list[str]:
        """The layout as bpf/flows.c's macros."""
        macros = {
            "LENS_RAW": 1,
            "LENS_HEAD_AT": self.head_at,
            "LENS_HEAD_SIZE": self.head_size,
            "LENS_AT_DADDR": self.daddr,
            "LENS_AT_RCV_SADDR": self.rcv_saddr,
            "LENS_AT_DPORT": self.dport,
            "LENS_AT_NUM": self.num,
            "LENS_AT_FAMILY": self.family,
            "LENS_OFF_V6_DADDR": self.v6_daddr,
            "LENS_OFF_V6_RCV_SADDR": self.v6_rcv_saddr,
            "LENS_OFF_PROTOCOL": self.protocol,
            "LENS_OFF_SRTT_US": self.srtt_us,
        }
        return [f"-D{name}={value}" for name, value in macros.items()]


def read_layout(path: Path = VMLINUX) -> SockLayout:
    """The layout of the kernel whose BTF is at `path`; LayoutError when it cannot be had."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LayoutError(f"no kernel BTF at {path} ({exc.strerror})") from None
    try:
        return layout_of(btf.Btf(data))
    except btf.BtfError as exc:
        raise LayoutError(f"kernel BTF at {path}: {exc}") from None


def layout_of(types: btf.Btf) -> SockLayout:
    """The layout from parsed BTF, every member checked for its size and the raw tracepoints
    for the arguments the program reads."""
    missing = [name for name in RAW_TRACEPOINTS if not types.has_typedef(f"btf_trace_{name}")]
    if missing:
        raise LayoutError(f"raw tracepoints missing: {', '.join(missing)}")
    for name, wanted in RAW_TRACEPOINTS.items():
        arguments = types.parameters(f"btf_trace_{name}", 1 + len(wanted))[1:]
        if arguments != wanted:
            raise LayoutError(
                f"raw tracepoint {name} takes ({', '.join(arguments)}), not ({', '.join(wanted)})"
            )
    for outer, inner in NESTING:
        if types.members(outer, (inner,))[inner].offset != 0:
            raise LayoutError(f"struct {outer} does not begin with its {inner}")
    common_at = types.members("sock", ("__sk_common",))["__sk_common"].offset
    places = {
        name: btf.Member(offset=common_at + member.offset, size=member.size)
        for name, member in types.members("sock_common", HEAD + V6).items()
    }
    places |= types.members("sock", ("sk_protocol",))
    places |= types.members("tcp_sock", ("srtt_us",))
    wrong = [f"{name} ({places[name].size} bytes)" for name, size in SIZES.items()
             if places[name].size != size]  # fmt: skip
    if wrong:
        raise LayoutError(f"socket members of unexpected size: {', '.join(wrong)}")
    head_at = min(places[name].offset for name in HEAD)
    head_end = max(places[name].offset + places[name].size for name in HEAD)
    if head_end - head_at > HEAD_MAX:
        raise LayoutError(f"the socket's endpoints span {head_end - head_at} bytes, not one read")
    return SockLayout(
        head_at=head_at,
        head_size=head_end - head_at,
        daddr=places["skc_daddr"].offset - head_at,
        rcv_saddr=places["skc_rcv_saddr"].offset - head_at,
        dport=places["skc_dport"].offset - head_at,
        num=places["skc_num"].offset - head_at,
        family=places["skc_family"].offset - head_at,
        v6_daddr=places["skc_v6_daddr"].offset,
        v6_rcv_saddr=places["skc_v6_rcv_saddr"].offset,
        protocol=places["sk_protocol"].offset,
        srtt_us=places["srtt_us"].offset,
    )
