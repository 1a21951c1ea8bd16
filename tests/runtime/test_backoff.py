from __future__ import annotations

import random

import pytest

from lens.runtime import errors
from lens.runtime.backoff import Backoff


def test_delays_grow_within_their_ceiling_and_stop_at_the_maximum() -> None:
    backoff = Backoff(initial=1, factor=2, maximum=10, rng=random.Random(3))
    ceilings = [1, 2, 4, 8, 10, 10, 10]
    delays = [backoff.next_delay() for _ in ceilings]
    assert all(0 <= d <= c for d, c in zip(delays, ceilings, strict=True))
    assert backoff.failures == len(ceilings)
    assert max(delays[4:]) > 4, "late delays use the whole capped range"


def test_reset_starts_over() -> None:
    backoff = Backoff(initial=1, maximum=100, rng=random.Random(1))
    for _ in range(6):
        backoff.next_delay()
    backoff.reset()
    assert backoff.failures == 0
    assert backoff.next_delay() <= 1


def test_a_temporary_errors_delay_is_a_floor_up_to_the_maximum() -> None:
    backoff = Backoff(initial=0.1, maximum=5, rng=random.Random(0))
    assert backoff.next_delay(errors.TemporaryError("429", delay=3)) >= 3
    assert backoff.next_delay(errors.TemporaryError("429", delay=60)) == 5


def test_nonsense_parameters_are_refused() -> None:
    with pytest.raises(ValueError):
        Backoff(initial=0)
    with pytest.raises(ValueError):
        Backoff(initial=5, maximum=1)
    with pytest.raises(ValueError):
        Backoff(factor=0.5)
