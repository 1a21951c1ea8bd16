from __future__ import annotations

from lens.runtime.clock import FakeClock
from lens.runtime.throttle import LogThrottle


def test_a_line_per_reason_at_most_once_a_while_with_the_untold_count() -> None:
    clock = FakeClock()
    throttle = LogThrottle(every_seconds=60, clock=clock.monotonic)
    assert throttle.due("a") == 0
    assert throttle.due("b") == 0  # each reason has its own pace
    assert throttle.due("a", count=3) is None
    clock.advance(59)
    assert throttle.due("a") is None
    clock.advance(1)
    assert throttle.due("a", count=2) == 4
    assert throttle.due("a") is None


def test_a_clock_that_went_back_makes_a_line_due() -> None:
    now = [100.0]
    throttle = LogThrottle(every_seconds=60, clock=lambda: now[0])
    assert throttle.due("a") == 0
    now[0] = 50.0
    assert throttle.due("a") == 0
