"""A full memory barrier for this thread, through membarrier(2): the kernel's
membarrier_global_expedited() begins and ends with smp_mb(), needs no registration of the
caller, and sends no interrupts where no process registered for them. Python has no fence of its
own; without one, a store made through one syscall (a BPF map update) may be ordered after a
load made through the next on a CPU that allows it (arm64), whatever x86's locked instructions
in the syscall path happen to give.
"""

from __future__ import annotations

import ctypes
import os
import platform

MEMBARRIER_CMD_GLOBAL_EXPEDITED = 1 << 1
# The syscall's number: x86-64's own table, and the generic one arm64 uses.
SYSCALL_NUMBERS = {"x86_64": 324, "aarch64": 283, "arm64": 283}


class Barrier:
    """`full()` each time a barrier is needed; `available` False where the kernel, the
    architecture or a seccomp policy refuses membarrier (then only the syscalls' own ordering
    remains, which x86 gives)."""

    def __init__(self, machine: str | None = None) -> None:
        machine = machine or platform.machine()
        self._number = SYSCALL_NUMBERS.get(machine)
        self._libc = ctypes.CDLL(None, use_errno=True)
        self.available = self._number is not None
        self.error = "" if self.available else f"no membarrier number for {machine}"

    def full(self) -> None:
        if not self.available:
            return
        if self._libc.syscall(self._number, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0:
            self.available = False
            self.error = os.strerror(ctypes.get_errno())
