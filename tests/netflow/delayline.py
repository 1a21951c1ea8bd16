"""A userspace stand-in for `tc netem delay`, whose qdisc this machine's kernel lacks
(CONFIG_NET_SCH_NETEM is not set; nor is sch_fq, for a BPF departure-time delay): two TUN
devices whose packets this process carries from one to the other, each held `delay_seconds`.
Moved into two network namespaces, they make a link whose round trip is twice the delay.

Run as a process of its own (`python delayline.py NAME_A NAME_B DELAY_SECONDS`: it prints
`ready` once both devices exist and carries packets until SIGTERM), so that the test process's
own work never delays a packet (Python threads share one interpreter lock).
"""

from __future__ import annotations

import contextlib
import fcntl
import heapq
import itertools
import os
import select
import signal
import struct
import sys
import threading
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
MTU_READ = 65536


def _open_tun(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR)
    request = struct.pack("16sH22x", name.encode(), IFF_TUN | IFF_NO_PI)
    fcntl.ioctl(fd, TUNSETIFF, request)
    os.set_blocking(fd, False)
    return fd


class DelayLine:
    """Devices `names[0]` and `names[1]` (made in this process's namespace; move them with
    `ip link set NAME netns NS`), joined with a one-way delay."""

    def __init__(self, names: tuple[str, str], *, delay_seconds: float) -> None:
        self.names = names
        self.delay = delay_seconds
        self._fds = (_open_tun(names[0]), _open_tun(names[1]))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._carry, name="delay-line", daemon=True)

    def start(self) -> DelayLine:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for fd in self._fds:
            os.close(fd)

    def _carry(self) -> None:
        pending: list[tuple[float, int, int, bytes]] = []
        order = itertools.count()
        other = {self._fds[0]: self._fds[1], self._fds[1]: self._fds[0]}
        while not self._stop.is_set():
            now = time.monotonic()
            while pending and pending[0][0] <= now:
                _, _, target, packet = heapq.heappop(pending)
                # The device may be gone (its namespace removed): the packet is lost then.
                with contextlib.suppress(OSError):
                    os.write(target, packet)
            wait = min(0.05, pending[0][0] - now) if pending else 0.05
            ready, _, _ = select.select(list(self._fds), [], [], max(wait, 0))
            arrived = time.monotonic()
            for fd in ready:
                while True:
                    try:
                        packet = os.read(fd, MTU_READ)
                    except (BlockingIOError, OSError):
                        break
                    heapq.heappush(pending, (arrived + self.delay, next(order), other[fd], packet))


def main() -> None:
    first, second, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
    # A packet held longer than the delay is an RTT the tests did not configure: ahead of the
    # machine's other work, as netem's qdisc is in the kernel. Real-time (as root): a nice
    # level still shares the CPUs with a loaded CI machine's compilers and with another test's
    # delay line, which once made a 40 ms link measure 44.8 ms. It sleeps in select between
    # packets, so it cannot starve the machine. Elsewhere a nice level, else the default.
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    except OSError:
        with contextlib.suppress(OSError):
            os.nice(-15)
    line = DelayLine((first, second), delay_seconds=delay).start()
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    print("ready", flush=True)
    stopped.wait()
    line.stop()


if __name__ == "__main__":
    main()
