from __future__ import annotations

import errno
import ipaddress
import socket
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.netflow import listeners, sockdiag
from lens.netflow.sockets import Endpoint
from lens.runtime import errors

TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:AED3 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0
   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0
   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0
"""
TCP6 = """\
  sl  local_address                         remote_address                        st tx_queue
   0: 00000000000000000000000001000000:1111 00000000000000000000000000000000:0000 0A 00000000:0
   1: 0000000000000000FFFF0000C800000A:0050 00000000000000000000000000000000:0000 0A 00000000:0
"""


def _at(address: str, port: int) -> Endpoint:
    return Endpoint(address=ipaddress.ip_address(address), port=port)


def test_listening_sockets_of_both_families() -> None:
    assert listeners.parse_listening(TCP, source="tcp") == {
        _at("127.0.0.1", 0xAED3),
        _at("0.0.0.0", 8080),
    }
    assert listeners.parse_listening(TCP6, source="tcp6") == {
        _at("::1", 0x1111),
        _at("10.0.0.200", 80),  # an IPv4 address on a dual-stack socket
    }


def test_a_wildcard_listener_accepts_every_local_address() -> None:
    found = listeners.Listeners(
        endpoints=frozenset({_at("0.0.0.0", 8080), _at("::", 443), _at("127.0.0.1", 5432)})
    )
    assert found.accepts(_at("10.1.2.3", 8080))
    assert found.accepts(_at("fd00::1", 443))
    assert found.accepts(_at("10.1.2.3", 443))  # :: takes IPv4 too (dual stack)
    assert found.accepts(_at("127.0.0.1", 5432)) and not found.accepts(_at("10.1.2.3", 5432))
    assert found.ports == [443, 5432, 8080]


def test_the_machines_own_listeners_are_read(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET6) as listener:
        listener.bind(("::", 0))
        listener.listen()
        port = listener.getsockname()[1]
        found = listeners.read_listeners(Path("/"))
    assert port in found.ports
    assert found.accepts(_at("192.0.2.1", port))


def test_a_missing_tcp6_is_ipv6_off(tmp_path: Path) -> None:
    (tmp_path / "proc/net").mkdir(parents=True)
    (tmp_path / "proc/net/tcp").write_text(TCP)
    assert listeners.read_proc_listeners(tmp_path).ports == [8080, 0xAED3]


def test_sock_diag_tells_the_listeners_proc_net_tcp_tells() -> None:
    """The kernel's LISTEN sockets through sock_diag, IPv4 and IPv6 (dual stack and not), are
    what /proc/net/tcp and tcp6 list, without walking every connection."""
    with (
        socket.create_server(("127.0.0.1", 0)) as v4,
        socket.create_server(("::", 0), family=socket.AF_INET6, dualstack_ipv6=True) as dual,
        socket.socket(socket.AF_INET6) as v6_only,
        socket.create_connection(v4.getsockname()) as connected,
    ):
        v6_only.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        v6_only.bind(("::1", 0))
        v6_only.listen()
        ours = {
            _at("127.0.0.1", v4.getsockname()[1]),
            _at("::", dual.getsockname()[1]),
            _at("::1", v6_only.getsockname()[1]),
        }
        # Other tests open and close listeners meanwhile: the two readings agree once.
        pairs = [_both()]
        while pairs[-1][0] != pairs[-1][1] and len(pairs) < 20:
            pairs.append(_both())
        assert pairs[-1][0] == pairs[-1][1]
        found = listeners.read_diag_listeners()
        assert found.source == "sock_diag"
        assert ours <= found.endpoints
        assert connected.getsockname()[1] not in found.ports  # a connection is not a listener


def _both() -> tuple[frozenset[Endpoint], frozenset[Endpoint]]:
    diag = listeners.read_diag_listeners().endpoints
    return diag, listeners.read_proc_listeners(Path("/")).endpoints


def test_without_netlink_the_proc_files_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused() -> listeners.Listeners:
        raise errors.SourceError("sock_diag: no netlink socket (Permission denied)")

    monkeypatch.setattr(listeners, "read_diag_listeners", refused)
    (tmp_path / "proc/net").mkdir(parents=True)
    (tmp_path / "proc/net/tcp").write_text(TCP)
    found = listeners.read_listeners(tmp_path)
    assert found.ports == [8080, 0xAED3]
    assert found.source == "/proc/net/tcp (sock_diag: no netlink socket (Permission denied))"


def test_an_ipv6_dump_refused_otherwise_than_ipv6_off_is_not_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """IPv6 off (ENOENT) leaves IPv4's listeners; any other refusal is an error, and the proc
    files are read instead."""
    real_dump = listeners.SockDiag.dump

    def dump(self: listeners.SockDiag, family: int, *args: object, **kwargs: object) -> object:
        if family == socket.AF_INET6:
            raise sockdiag.DumpRefused(refusal)
        return real_dump(self, family, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(listeners.SockDiag, "dump", dump)
    refusal = errno.ENOENT
    with socket.create_server(("127.0.0.1", 0)) as v4:
        assert listeners.read_diag_listeners().accepts(_at("127.0.0.1", v4.getsockname()[1]))
    refusal = errno.EPERM
    with pytest.raises(sockdiag.DumpRefused):
        listeners.read_diag_listeners()
    (tmp_path / "proc/net").mkdir(parents=True)
    (tmp_path / "proc/net/tcp").write_text(TCP)
    assert listeners.read_listeners(tmp_path).source.startswith("/proc/net/tcp (sock_diag")


@pytest.mark.parametrize(
    ("line", "message"),
    [("   0: zz:0000 00000000:0000 0A", "not hex"), ("   0: nonsense", "not a socket line")],
)
def test_a_bad_line_is_a_source_error(line: str, message: str) -> None:
    with pytest.raises(errors.SourceError, match=message):
        listeners.parse_listening("header\n" + line + "\n", source="tcp")


@given(st.text())
def test_any_text_is_listeners_or_a_source_error(text: str) -> None:
    try:
        found = listeners.parse_listening(text, source="tcp")
    except errors.SourceError:
        return
    assert all(endpoint.port >= 0 for endpoint in found)
