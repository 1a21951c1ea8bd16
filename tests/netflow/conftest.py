"""Two network namespaces joined by a link with a known delay, made by the test (as root): two
TUN devices carried by a delay line in a process of its own (delayline.py: this kernel has no
netem), and the traffic generator (traffic.py) run in each."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

TRAFFIC = Path(__file__).with_name("traffic.py")
DELAY_LINE = Path(__file__).with_name("delayline.py")
CLONE_NEWNET = 0x40000000
T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """Namespace `client` (address client_ip) reaches `server` (server_ip) over a link whose
    round trip takes `rtt_ms` (half each way)."""

    client: str
    server: str
    client_ip: str
    server_ip: str
    client_ip6: str
    server_ip6: str
    rtt_ms: float

    def run(self, namespace: str, *args: str) -> subprocess.Popen[str]:
        command = ["ip", "netns", "exec", namespace, sys.executable, str(TRAFFIC), *args]
        return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)

    def transfer(
        self, *, to: str, port: int, send: int, reply: int, hold: float = 0.0
    ) -> tuple[int, int]:
        """`send` bytes from the client to the server at `to`, `reply` back, the connection
        kept open `hold` seconds more on each side; what each read."""
        server = self.run(self.server, "serve", to, str(port), str(reply), str(hold))
        assert server.stdout is not None
        assert server.stdout.readline().strip() == "listening"
        client = self.run(self.client, "send", to, str(port), str(send), str(hold))
        client_out, _ = client.communicate(timeout=120)
        server_out, _ = server.communicate(timeout=120)
        return int(server_out.strip()), int(client_out.strip())


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def link() -> Iterator[Link]:
    tag = f"{os.getpid() % 100000}"
    client, server = f"lens-nf-c{tag}", f"lens-nf-s{tag}"
    # A subnet per xdist worker: the kernel's programs see every namespace's traffic, so a link
    # of the other worker's test must not share the addresses this test's figures are read by.
    subnet = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0) % 250
    found = Link(
        client=client,
        server=server,
        client_ip=f"10.203.{subnet}.1",
        server_ip=f"10.203.{subnet}.2",
        client_ip6=f"fd00:203:{subnet:x}::1",
        server_ip6=f"fd00:203:{subnet:x}::2",
        rtt_ms=40.0,
    )
    devices = (f"lnc{tag}", f"lns{tag}")
    line = subprocess.Popen(
        [sys.executable, str(DELAY_LINE), *devices, str(found.rtt_ms / 2000)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert line.stdout is not None and line.stdout.readline().strip() == "ready"
    _ip("netns", "add", client)
    _ip("netns", "add", server)
    try:
        for namespace, device, ip4, ip6 in (
            (client, devices[0], found.client_ip, found.client_ip6),
            (server, devices[1], found.server_ip, found.server_ip6),
        ):
            _ip("link", "set", device, "netns", namespace)
            _ip("-n", namespace, "addr", "add", f"{ip4}/24", "dev", device)
            _ip("-n", namespace, "addr", "add", f"{ip6}/64", "dev", device, "nodad")
            _ip("-n", namespace, "link", "set", device, "up")
            _ip("-n", namespace, "link", "set", "lo", "up")
        yield found
    finally:
        _ip("netns", "del", client)
        _ip("netns", "del", server)
        line.terminate()
        line.wait(10)
        line.stdout.close()


def inside(namespace: str, make: Callable[[], T]) -> T:
    """`make()` run on a thread moved into `namespace` (setns): a socket it makes belongs to that
    network namespace, whichever thread then uses it."""
    found: list[T] = []

    def enter_and_make() -> None:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        with open(f"/var/run/netns/{namespace}") as handle:
            if libc.setns(handle.fileno(), CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns")
        found.append(make())

    thread = threading.Thread(target=enter_and_make)
    thread.start()
    thread.join(30)
    assert found, f"nothing made in {namespace}"
    return found[0]
