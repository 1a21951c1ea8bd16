"""The memory barrier: membarrier(2) answers on this machine; an architecture without a known
number, or a kernel refusing the call, leaves it off and says why."""

from __future__ import annotations

import platform

import pytest

from lens.netflow import membarrier


def test_the_barrier_is_had_here() -> None:
    barrier = membarrier.Barrier()
    barrier.full()
    barrier.full()
    assert (barrier.available, barrier.error) == (True, "")


def test_an_unknown_architecture_has_none() -> None:
    barrier = membarrier.Barrier("sparc64")
    barrier.full()
    assert (barrier.available, barrier.error) == (False, "no membarrier number for sparc64")


def test_a_refused_call_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(membarrier.SYSCALL_NUMBERS, platform.machine(), 100_000)  # no such call
    barrier = membarrier.Barrier()
    barrier.full()
    assert (barrier.available, barrier.error) == (False, "Function not implemented")
    barrier.full()  # not tried again
