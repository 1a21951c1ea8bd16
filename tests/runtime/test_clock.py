from __future__ import annotations

import threading

from lens.runtime.clock import FakeClock, SystemClock


def test_fake_clock_moves_only_when_advanced() -> None:
    clock = FakeClock(start_monotonic=10.0, start_time=1000.0)
    assert (clock.monotonic(), clock.time()) == (10.0, 1000.0)
    clock.advance(2.5)
    assert (clock.monotonic(), clock.time()) == (12.5, 1002.5)


def test_fake_clock_wakes_a_waiter_when_its_deadline_passes() -> None:
    clock = FakeClock(start_monotonic=0.0)
    stop = threading.Event()
    woke = threading.Event()
    results: list[bool] = []

    def waiter() -> None:
        results.append(clock.wait_until(5.0, stop))
        woke.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    clock.advance(4.0)
    assert not woke.wait(0.05)
    clock.advance(1.0)
    assert woke.wait(2)
    assert results == [False]
    thread.join()


def test_fake_clock_wait_returns_when_stopped() -> None:
    clock = FakeClock()
    stop = threading.Event()
    stop.set()
    assert clock.wait_until(clock.monotonic() + 100, stop) is True


def test_system_clock_wait_is_interrupted_by_stop() -> None:
    clock = SystemClock()
    stop = threading.Event()
    stop.set()
    assert clock.wait_until(clock.monotonic() + 60, stop) is True
    assert clock.wait_until(clock.monotonic() - 1, threading.Event()) is False
