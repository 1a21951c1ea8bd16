"""Token reviews kept a while: one question to the API server per token and period, refusals
kept shorter, the oldest forgotten past the bound, failures never kept."""

from __future__ import annotations

import pytest

from lens.kube.machinery.tokenreviews import Review
from lens.roles.api.reviewcache import REFUSED_SECONDS, ReviewCache
from lens.runtime import errors
from lens.runtime.clock import FakeClock

ALICE = Review(authenticated=True, username="alice", groups=("ops",))
NOBODY = Review(authenticated=False, error="invalid bearer token")


class ApiServer:
    def __init__(self) -> None:
        self.asked: list[str] = []
        self.down = False

    def review(self, token: str) -> Review:
        if self.down:
            raise errors.SourceError("token review failed: 503 Service Unavailable")
        self.asked.append(token)
        return ALICE if token == "good" else NOBODY


def _cache(server: ApiServer, clock: FakeClock, **kwargs: int) -> ReviewCache:
    return ReviewCache(server.review, seconds=60, monotonic=clock.monotonic, **kwargs)


def test_a_review_is_trusted_for_its_period() -> None:
    server, clock = ApiServer(), FakeClock()
    cache = _cache(server, clock)
    assert [cache.review("good") for _ in range(5)] == [ALICE] * 5
    clock.advance(59)
    assert cache.review("good") == ALICE and server.asked == ["good"]
    clock.advance(2)
    assert cache.review("good") == ALICE and server.asked == ["good", "good"]


def test_a_refusal_is_asked_again_sooner() -> None:
    server, clock = ApiServer(), FakeClock()
    cache = _cache(server, clock)
    assert cache.review("bad") == NOBODY
    clock.advance(REFUSED_SECONDS - 1)
    cache.review("bad")
    clock.advance(2)
    cache.review("bad")
    assert server.asked == ["bad", "bad"]


def test_the_oldest_are_forgotten_past_the_bound() -> None:
    server, clock = ApiServer(), FakeClock()
    cache = _cache(server, clock, max_entries=2)
    for token in ("good", "a", "b", "good"):
        cache.review(token)
    assert len(cache) == 2 and server.asked == ["good", "a", "b", "good"]


def test_a_failure_is_not_kept() -> None:
    server, clock = ApiServer(), FakeClock()
    cache = _cache(server, clock)
    server.down = True
    with pytest.raises(errors.SourceError):
        cache.review("good")
    server.down = False
    assert cache.review("good") == ALICE and len(cache) == 1
