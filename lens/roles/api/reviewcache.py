"""Token reviews of `lens api`, kept a short while: a dashboard's every request carries the same
token, and the API server should see one TokenReview per token a minute, not one per request.

Tokens are kept only as their SHA-256 digests. Answers the API server could not give (it is down)
are not kept: the next request asks again.
"""

from __future__ import annotations

import collections
import hashlib
import threading
from collections.abc import Callable

from lens.kube.machinery.tokenreviews import Review

MAX_ENTRIES = 10_000
# A refused token is asked about again sooner: it may be one just made.
REFUSED_SECONDS = 10.0


class ReviewCache:
    """`review(token)` answered from memory for `seconds` after the API server said it."""

    def __init__(
        self,
        review: Callable[[str], Review],
        *,
        seconds: float,
        monotonic: Callable[[], float],
        max_entries: int = MAX_ENTRIES,
    ) -> None:
        self._review = review
        self._seconds = seconds
        self._monotonic = monotonic
        self._max_entries = max_entries
        self._lock = threading.Lock()
        self._kept: collections.OrderedDict[bytes, tuple[float, Review]] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def review(self, token: str) -> Review:
        """The review of `token`, from memory while fresh (SourceError: the API server could
        not be asked)."""
        key = hashlib.sha256(token.encode()).digest()
        now = self._monotonic()
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept[0] > now:
                self._kept.move_to_end(key)
                return kept[1]
        found = self._review(token)
        lasts = self._seconds if found.authenticated else min(self._seconds, REFUSED_SECONDS)
        with self._lock:
            self._kept[key] = (now + lasts, found)
            self._kept.move_to_end(key)
            while len(self._kept) > self._max_entries:
                self._kept.popitem(last=False)
        return found
