"""Enriched requests forwarded to the configured remote-write target: queued (bounded), joined
into batches, sent by one thread with retries and backoff; what cannot be sent is counted.

One sender, in order: the remote-write spec wants each series' samples in timestamp order, and
a sender of ours racing another could deliver a Prometheus shard's later request first (the
target then refuses the earlier one as out of order). Batching keeps one sender fast enough.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import threading
import time
from collections.abc import Callable

import urllib3

from lens import __version__
from lens.runtime import lifecycle
from lens.runtime.backoff import Backoff
from lens.runtime.selfmetrics import SelfMetrics
from lens.telemetry.remotewrite.protocol import (
    CONTENT_TYPE_V1,
    CONTENT_TYPE_V2,
    Version,
    compress,
)

log = logging.getLogger(__name__)

_RETRY_AFTER_MAX = 60.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ForwardSettings:
    url: str
    version: Version = Version.V1
    timeout_seconds: float = 10.0
    queue_requests: int = 256
    max_samples_per_send: int = 4000
    give_up_seconds: float = 300.0
    # Called before each request: the bearer token to send, or "" for none.
    bearer_token: Callable[[], str] = lambda: ""


@dataclasses.dataclass(frozen=True, slots=True)
class _Queued:
    body: bytes  # uncompressed, in the target's protocol
    samples: int


class ForwardMetrics:
    def __init__(self, metrics: SelfMetrics) -> None:
        self.sent = metrics.counter(
            "lens_remote_write_forwarded_samples_total",
            "Samples, histograms and exemplars forwarded to telemetry.remote_write_url and "
            "accepted by it.",
        )
        self.requests = metrics.counter(
            "lens_remote_write_forward_requests_total",
            "Requests sent to telemetry.remote_write_url, by status code (or 'error' when none "
            "came back).",
            ("code",),
        )
        self.dropped = metrics.counter(
            "lens_remote_write_dropped_samples_total",
            "Samples never forwarded, by reason: rejected (the target answered 4xx), gave_up "
            "(retried for telemetry.remote_write_give_up_seconds), stopped (lens jobs stopped "
            "with them queued).",
            ("reason",),
        )
        self.queued = metrics.gauge(
            "lens_remote_write_queued_requests",
            "Received requests waiting to be forwarded.",
        )


class Forwarder:
    """A part: `offer()` from any thread; start() and stop() from the process."""

    name = "remote-write-forwarder"

    def __init__(self, settings: ForwardSettings, *, metrics: ForwardMetrics) -> None:
        self._settings = settings
        self._metrics = metrics
        self._queue: collections.deque[_Queued] = collections.deque()
        self._lock = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._http = urllib3.PoolManager(
            num_pools=2,
            maxsize=1,
            timeout=urllib3.Timeout(total=settings.timeout_seconds),
            retries=False,
        )
        metrics.queued.set_function(lambda: len(self._queue))

    def offer(self, body: bytes, samples: int) -> bool:
        """Queue one request's body (uncompressed, in the target's protocol); False when the
        queue is full (the sender should be answered 503 and retry later)."""
        with self._lock:
            if self._stopping or len(self._queue) >= self._settings.queue_requests:
                return False
            self._queue.append(_Queued(body, samples))
            self._lock.notify()
        return True

    async def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="lens-remote-write", daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        """Send what is queued within one request timeout, then count the rest as dropped."""
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        thread = self._thread
        if thread is not None:
            await lifecycle.in_thread(
                lambda: thread.join(self._settings.timeout_seconds + 1), name="lens-rw-stop"
            )
        with self._lock:
            left = sum(queued.samples for queued in self._queue)
            self._queue.clear()
        if left:
            self._metrics.dropped.labels("stopped").inc(left)
        self._http.clear()

    def _run(self) -> None:
        deadline: float | None = None
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            if self._stopping and deadline is None:
                deadline = time.monotonic() + self._settings.timeout_seconds
            self._deliver(batch, stop_deadline=deadline)

    def _next_batch(self) -> list[_Queued] | None:
        """The oldest requests, joined up to max_samples_per_send (one at a time in 2.0, whose
        symbol tables cannot be joined); None once stopping and the queue is empty."""
        with self._lock:
            while not self._queue:
                if self._stopping:
                    return None
                self._lock.wait()
            batch = [self._queue.popleft()]
            if self._settings.version is Version.V1:
                samples = batch[0].samples
                while self._queue and samples + self._queue[0].samples <= self._limit:
                    samples += self._queue[0].samples
                    batch.append(self._queue.popleft())
            return batch

    @property
    def _limit(self) -> int:
        return self._settings.max_samples_per_send

    def _deliver(self, batch: list[_Queued], *, stop_deadline: float | None) -> None:
        # Concatenated WriteRequests are one WriteRequest: a protobuf repeated field's
        # occurrences are appended when a message's encodings are joined.
        body = compress(b"".join(queued.body for queued in batch))
        samples = sum(queued.samples for queued in batch)
        give_up = time.monotonic() + self._settings.give_up_seconds
        backoff = Backoff(initial=0.5, maximum=30.0)
        while True:
            status, retry_after = self._post(body)
            if status is not None and 200 <= status < 300:
                self._metrics.sent.inc(samples)
                return
            if status is not None and 400 <= status < 500 and status != 429:
                log.warning("remote-write target refused a request", extra={"status": status})
                self._metrics.dropped.labels("rejected").inc(samples)
                return
            delay = max(backoff.next_delay(), min(retry_after, _RETRY_AFTER_MAX))
            until = time.monotonic() + delay
            if until > give_up or (stop_deadline is not None and until > stop_deadline):
                reason = "stopped" if stop_deadline is not None else "gave_up"
                self._metrics.dropped.labels(reason).inc(samples)
                return
            self._pause(delay, until_stop=stop_deadline is None)
            if self._stopping and stop_deadline is None:
                stop_deadline = time.monotonic() + self._settings.timeout_seconds

    def _pause(self, delay: float, *, until_stop: bool) -> None:
        """Wait `delay`, or less when `until_stop` and a stop begins meanwhile."""
        with self._lock:
            self._lock.wait_for(lambda: until_stop and self._stopping, delay)

    def _post(self, body: bytes) -> tuple[int | None, float]:
        """The target's status (None when it could not be reached) and its Retry-After."""
        headers = {
            "Content-Encoding": "snappy",
            "Content-Type": CONTENT_TYPE_V2
            if self._settings.version is Version.V2
            else CONTENT_TYPE_V1,
            "User-Agent": f"lens/{__version__}",
            "X-Prometheus-Remote-Write-Version": "2.0.0"
            if self._settings.version is Version.V2
            else "0.1.0",
        }
        token = self._settings.bearer_token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            response = self._http.request("POST", self._settings.url, body=body, headers=headers)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            log.warning("remote-write target unreachable", extra={"error": str(exc)})
            self._metrics.requests.labels("error").inc()
            return None, 0.0
        self._metrics.requests.labels(str(response.status)).inc()
        return response.status, _retry_after(response.headers.get("Retry-After"))


def _retry_after(value: str | None) -> float:
    """Seconds a Retry-After of delta-seconds asks for (an HTTP date is taken as none)."""
    if value is None or not value.strip().isdigit():
        return 0.0
    return float(value.strip())
