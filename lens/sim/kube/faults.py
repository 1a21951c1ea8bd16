"""Fault injection for tests: closed and stalled watches, forced 410s, 429/500 answers.

server.py consults it on every request and watching.py on every watch step; tests and
`lens sim kube` drive it through KubeApiServer.
"""

from __future__ import annotations

import dataclasses
import threading

from lens.sim.kube.status import ApiError


@dataclasses.dataclass(slots=True)
class _Failure:
    code: int
    remaining: int
    retry_after: int | None
    method: str | None
    path_contains: str | None


class Faults:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._close_generation = 0
        self._resume = threading.Event()
        self._resume.set()
        self._gone = 0
        self._failures: list[_Failure] = []

    # watches ------------------------------------------------------------------------------

    @property
    def close_generation(self) -> int:
        with self._lock:
            return self._close_generation

    def close_watches(self) -> None:
        """End every open watch stream (clients see the stream end and reconnect)."""
        with self._lock:
            self._close_generation += 1
        self._resume.set()

    def stall_watches(self) -> None:
        """Keep watch connections open but send nothing, not even bookmarks."""
        self._resume.clear()

    def resume_watches(self) -> None:
        self._resume.set()

    @property
    def stalled(self) -> bool:
        return not self._resume.is_set()

    def wait_unstalled(self, timeout: float) -> bool:
        return self._resume.wait(timeout)

    def force_gone(self, count: int = 1) -> None:
        """Answer the next `count` watch requests with a 410 Gone ERROR event."""
        with self._lock:
            self._gone += count

    def take_gone(self) -> bool:
        with self._lock:
            if self._gone:
                self._gone -= 1
                return True
            return False

    # requests -----------------------------------------------------------------------------

    def fail_requests(
        self,
        code: int,
        *,
        count: int = 1,
        retry_after: int | None = None,
        method: str | None = None,
        path_contains: str | None = None,
    ) -> None:
        """Answer the next `count` matching requests with `code` (429 and 5xx for retries)."""
        with self._lock:
            self._failures.append(_Failure(code, count, retry_after, method, path_contains))

    def take_failure(self, method: str, path: str) -> ApiError | None:
        with self._lock:
            for failure in self._failures:
                if failure.method and failure.method != method:
                    continue
                if failure.path_contains and failure.path_contains not in path:
                    continue
                failure.remaining -= 1
                if failure.remaining <= 0:
                    self._failures.remove(failure)
                reason = "TooManyRequests" if failure.code == 429 else "InternalError"
                message = "injected fault: " + (
                    "too many requests" if failure.code == 429 else "internal error"
                )
                return ApiError(failure.code, reason, message, retry_after=failure.retry_after)
        return None
