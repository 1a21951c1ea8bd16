"""The eBPF backend for real: the program compiled with bcc and attached both ways — to raw
tracepoints at the kernel's BTF offsets, and to the ordinary tracepoints (the BTF hidden) —,
traffic of known size between two network namespaces over a link of 40 ms round trip, and the
counters read back: bytes each way exact (within 1 %), the RTT within 10 % of the link's, who
opened the connection, IPv4 and IPv6; and each way it cannot load, one line."""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lens.netflow import loader, sockets, socklayout
from lens.netflow.flows import DeltaTracker, FlowDelta

from . import loopback
from .conftest import Link

pytestmark = pytest.mark.slow_timeout

SENT = 3_000_000
REPLY = 250_000


NO_BTF = Path("/nonexistent/vmlinux")


@pytest.fixture(params=["raw_tracepoint", "tracepoint"])
def program(request: pytest.FixtureRequest) -> Iterator[loader.EbpfFlows]:
    flows = loader.EbpfFlows(
        btf=socklayout.VMLINUX if request.param == "raw_tracepoint" else NO_BTF
    )
    assert flows.attachment == request.param, flows.why_not_raw
    try:
        yield flows
    finally:
        flows.close()


def _flows_of(program: loader.EbpfFlows, tracker: DeltaTracker, port: int) -> list[FlowDelta]:
    return [
        delta
        for delta in tracker.advance(program.read())
        if port in (delta.local.port, delta.remote.port)
    ]


def _until_closed(
    program: loader.EbpfFlows, tracker: DeltaTracker, port: int
) -> tuple[FlowDelta, FlowDelta]:
    """The client's and the server's socket, summed over reads until both closed (the last
    ACK of a close is one delay away)."""
    steps: list[FlowDelta] = []
    deadline = time.monotonic() + 5
    while sum(step.closes for step in steps) < 2:
        assert time.monotonic() < deadline, steps
        time.sleep(0.05)
        steps += _flows_of(program, tracker, port)
    sides = []
    for opened in ("here", "there"):
        mine = [step for step in steps if step.opened == opened]
        assert mine, steps
        sides.append(
            dataclasses.replace(
                mine[-1],
                sent=sum(step.sent for step in mine),
                received=sum(step.received for step in mine),
                rtt_sum_us=sum(step.rtt_sum_us for step in mine),
                rtt_count=sum(step.rtt_count for step in mine),
                connections=sum(step.connections for step in mine),
                closes=sum(step.closes for step in mine),
            )
        )
    return sides[0], sides[1]


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_bytes_rtt_and_who_opened_are_the_traffics(
    program: loader.EbpfFlows, link: Link, family: str
) -> None:
    tracker = DeltaTracker()
    tracker.advance(program.read())  # whatever the machine did before
    server_ip = link.server_ip if family == "ipv4" else link.server_ip6
    client_ip = link.client_ip if family == "ipv4" else link.client_ip6
    port = 7400 + (family == "ipv6")
    read_by_server, read_by_client = link.transfer(to=server_ip, port=port, send=SENT, reply=REPLY)
    assert (read_by_server, read_by_client) == (SENT, REPLY)
    client, server = _until_closed(program, tracker, port)
    assert client.local.address == ipaddress.ip_address(client_ip)
    assert client.remote == server.local and server.remote == client.local
    assert client.remote.port == port
    for delta in (client, server):
        assert (delta.connections, delta.closes) == (1, 1)
    assert abs(client.sent - SENT) <= SENT / 100 and abs(server.received - SENT) <= SENT / 100
    assert abs(server.sent - REPLY) <= REPLY / 100 and abs(client.received - REPLY) <= REPLY / 100
    delay_us = link.rtt_ms * 1000
    for delta in (client, server):
        assert delta.rtt_count > 0
        mean = delta.rtt_sum_us / delta.rtt_count
        assert abs(mean - delay_us) <= delay_us / 10, (delta.opened, mean)
    assert program.dropped() == sockets.Dropped(flows_full=0, closed_full=0)
    assert _flows_of(program, tracker, port) == []  # read once: nothing more to tell


def test_a_live_connection_is_told_in_steps_that_add_up(
    program: loader.EbpfFlows, link: Link
) -> None:
    tracker = DeltaTracker()
    tracker.advance(program.read())
    server = link.run(link.server, "serve", link.server_ip, "7410", "0")
    assert server.stdout is not None and server.stdout.readline().strip() == "listening"
    client = link.run(link.client, "send", link.server_ip, "7410", str(SENT))
    steps = []
    while client.poll() is None:
        steps += _flows_of(program, tracker, 7410)
    client.communicate(timeout=60)
    server.communicate(timeout=60)
    steps += _flows_of(program, tracker, 7410)
    sent = sum(step.sent for step in steps if step.opened == "here")
    assert sent == SENT, [(s.sent, s.connections, s.closes) for s in steps if s.opened == "here"]
    assert sum(step.connections for step in steps if step.opened == "here") == 1


def test_missing_tracepoints_are_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without BTF the ordinary tracepoints are the way, and tracefs says which are there."""
    (tmp_path / "events" / "sock" / "inet_sock_set_state").mkdir(parents=True)
    monkeypatch.setattr(loader, "TRACEFS", (tmp_path,))
    with pytest.raises(loader.NetflowUnavailable, match="tracepoints missing") as raised:
        loader.EbpfFlows(btf=NO_BTF)
    assert "tcp/tcp_probe" in str(raised.value)
    assert "sock/inet_sock_set_state" not in str(raised.value)


def test_bcc_missing_says_which_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(loader, "SYSTEM_PACKAGES", tmp_path)
    monkeypatch.setitem(__import__("sys").modules, "bcc", None)  # an import of it fails
    with pytest.raises(loader.NetflowUnavailable, match="python3-bpfcc"):
        loader.import_bcc()


def test_headers_are_linked_where_the_kernels_build_folder_has_none(tmp_path: Path) -> None:
    headers = tmp_path / "usr/src/linux-headers-6.1.0-56-amd64"
    common = tmp_path / "usr/src/linux-headers-6.1.0-56-common"
    headers.mkdir(parents=True)
    common.mkdir()
    modules = tmp_path / "lib/modules/6.18.44"
    loader.ensure_headers(modules, headers)
    assert (modules / "build").resolve() == headers and (modules / "source").resolve() == common
    loader.ensure_headers(modules, None)  # there now: nothing to do


def test_no_headers_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(loader.NetflowUnavailable, match="no kernel headers for bcc at"):
        loader.ensure_headers(tmp_path / "lib/modules/6.18.44", None)


@pytest.mark.parametrize("btf", [socklayout.VMLINUX, NO_BTF], ids=["raw", "ordinary"])
def test_a_full_map_is_counted_and_the_rest_still_tracked(btf: Path) -> None:
    """A map of 1,024 sockets and 1,200 connections open at once: the 176 beyond are counted
    as dropped, not lost silently, and the program goes on."""
    flows = loader.EbpfFlows(max_flows=1024, btf=btf)
    opened: list[socket.socket] = []
    try:
        with socket.create_server(("127.0.0.1", 0), backlog=2048) as server:
            port = server.getsockname()[1]
            for _ in range(600):
                client = socket.create_connection(("127.0.0.1", port))
                accepted, _ = server.accept()
                opened += [client, accepted]
            live = flows.read().live
            dropped = flows.dropped()
        ours = [s for s in live if port in (s.local.port, s.remote.port)]
        assert len(ours) + dropped.flows_full >= 1200
        assert dropped.flows_full >= 1200 - 1024
        assert len(live) <= 1024
    finally:
        for each in opened:
            each.close()
        flows.close()


def test_short_connections_are_summed_in_the_kernel_by_peer(program: loader.EbpfFlows) -> None:
    """300 connections that open and end between two reads reach userspace as one sum per side
    (who opened, peer, server port), their bytes and counts exact."""
    tracker = DeltaTracker()
    tracker.advance(program.read())
    with socket.create_server(("127.0.0.1", 0), backlog=512) as server:
        port = server.getsockname()[1]
        for _ in range(300):
            with socket.create_connection(("127.0.0.1", port)) as client:
                accepted, _ = server.accept()
                with accepted:
                    client.sendall(b"x" * 1000)
                    got = 0
                    while got < 1000:
                        got += len(accepted.recv(4096))
    time.sleep(0.2)
    reading = program.read()
    mine = [e for e in reading.ended if port in (e.local.port, e.remote.port)]
    assert sorted(e.opened for e in mine) == ["here", "there"]
    by_side = {e.opened: e for e in mine}
    assert (by_side["here"].sockets, by_side["here"].sent) == (300, 300_000)
    assert (by_side["there"].sockets, by_side["there"].received) == (300, 300_000)
    assert by_side["here"].local.port == 0 and by_side["there"].remote.port == 0
    deltas = [d for d in tracker.advance(reading) if port in (d.local.port, d.remote.port)]
    assert sum(d.connections for d in deltas) == 600 and sum(d.closes for d in deltas) == 600


@pytest.mark.parametrize("btf", [socklayout.VMLINUX, NO_BTF], ids=["raw", "ordinary"])
def test_a_connection_open_before_the_program_is_met_at_its_segments(btf: Path) -> None:
    """Its endpoints come from its first segment received (who opened it unknown), and its
    bytes are counted from then on: all but the first send at most."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        accepted, _ = server.accept()
        flows = loader.EbpfFlows(btf=btf)
        try:
            tracker = DeltaTracker()
            tracker.advance(flows.read())
            with client, accepted:
                client.sendall(b"a")
                assert accepted.recv(1) == b"a"
                accepted.sendall(b"b")
                assert client.recv(1) == b"b"
                client.sendall(b"x" * 10_000)
                got = 0
                while got < 10_000:
                    got += len(accepted.recv(65536))
            time.sleep(0.1)
            port = server.getsockname()[1]
            deltas = [
                d for d in tracker.advance(flows.read()) if port in (d.local.port, d.remote.port)
            ]
        finally:
            flows.close()
    sides = {delta.local.port == port: delta for delta in deltas}
    assert sorted(sides) == [False, True] and len(deltas) == 2, deltas
    client_side, server_side = sides[False], sides[True]
    assert (client_side.opened, server_side.opened) == ("unknown", "unknown")
    assert client_side.remote == server_side.local and server_side.remote == client_side.local
    assert str(client_side.local.address) == "127.0.0.1"
    assert 10_000 <= client_side.sent <= 10_001 and server_side.received == 10_001
    assert (server_side.sent, client_side.received) == (1, 1)


def test_a_raw_program_that_does_not_load_gives_way_to_the_ordinary_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(socklayout.SockLayout, "cflags", lambda _layout: ["-DLENS_RAW=1"])
    flows = loader.EbpfFlows()  # the offsets undefined: the raw program does not compile
    try:
        assert flows.attachment == "tracepoint"
        assert flows.why_not_raw.startswith("the BPF program did not load")
    finally:
        flows.close()


def test_bytes_peeked_are_counted_once_read(program: loader.EbpfFlows) -> None:
    tracker = DeltaTracker()
    tracker.advance(program.read())
    with loopback.connection() as connection:
        connection.client.sendall(b"p" * 500)
        peeked = b""
        while len(peeked) < 500:
            peeked = connection.accepted.recv(500, socket.MSG_PEEK)
        got = b""
        while len(got) < 500:
            got += connection.accepted.recv(500 - len(got))
    time.sleep(0.1)
    deltas = [d for d in tracker.advance(program.read()) if d.local.port == connection.port]
    assert sum(delta.received for delta in deltas) == 500


class _LastRefused:
    """RAW_FUNCTION's place: a function the program lacks for the last raw tracepoint."""

    def format(self, event: str) -> str:
        return "lens_raw_missing" if event == "tcp_destroy_sock" else f"lens_raw_{event}"


def _links() -> int:
    """This process's BPF links: a raw tracepoint attached is one."""
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            found += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:bpf_link"
    return found


def test_raw_programs_attached_before_one_refused_are_detached(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = _links()
    monkeypatch.setattr(loader, "RAW_FUNCTION", _LastRefused())
    flows = loader.EbpfFlows()
    try:
        assert flows.attachment == "tracepoint"
        assert flows.why_not_raw.startswith("raw tracepoint not attached")
        assert _links() == before  # the five attached before are gone
    finally:
        flows.close()
