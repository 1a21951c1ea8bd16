"""The event server's gRPC registration: messages parsed leniently, so that one that is not a
lens.v1 EventBatch is answered INVALID_ARGUMENT, counted by reason and logged at most once a
minute per reason, instead of gRPC's UNKNOWN with a traceback per message. Records the store
cannot hold are counted and logged the same way. TokenCheck is who may stream.

containers/server/receiving.py's EventReceiver is the servicer; roles/jobs registers it here.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Callable, Sequence

import grpc
from prometheus_client import Counter

from lens.containers import wire
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.runtime.selfmetrics import SelfMetrics
from lens.runtime.throttle import LogThrottle

log = logging.getLogger(__name__)

SERVICE = "lens.v1.ContainerEvents"
LOG_EVERY_SECONDS = 60.0


class Refusals:
    """Counts refused messages (or records) by reason; logs the first of each reason and then
    at most one line a minute, with how many were refused meanwhile."""

    def __init__(
        self,
        counter: Counter,
        *,
        message: str = "refused a message that is no event batch",
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._counter = counter
        self._message = message
        self._throttle = LogThrottle(every_seconds=LOG_EVERY_SECONDS, clock=monotonic)

    def refuse(self, reason: str, *, count: int = 1, **fields: str) -> None:
        """Count `count` refusals for `reason`; `fields` go on the log line, if one is due."""
        self._counter.labels(reason).inc(count)
        since = self._throttle.due(reason, count=count)
        if since is not None:
            log.warning(
                self._message, extra={"reason": reason, **fields, "refused_since_last_line": since}
            )

    def refuse_all(self, refused: Sequence[wire.WireError], **fields: str) -> None:
        """`refuse` each reason of `refused` once, with its count and its first one's detail."""
        by_reason: dict[str, list[wire.WireError]] = {}
        for error in refused:
            by_reason.setdefault(error.reason, []).append(error)
        for reason, errors in by_reason.items():
            self.refuse(reason, count=len(errors), **fields, detail=str(errors[0]))


def invalid_messages(metrics: SelfMetrics) -> Refusals:
    """The refusals of messages that are no event batch (or name no agent the store can hold)."""
    return Refusals(
        metrics.counter(
            "lens_events_invalid_messages_total",
            "Messages answered INVALID_ARGUMENT because they were no event batch, by reason.",
            ("reason",),
        )
    )


def unusable_records(metrics: SelfMetrics) -> Refusals:
    """The refusals of records the store cannot hold (wire.WireError): skipped, acknowledged."""
    return Refusals(
        metrics.counter(
            "lens_events_unusable_records_total",
            "Records skipped and acknowledged because the store cannot hold them, by reason.",
            ("reason",),
        ),
        message="skipped unusable records",
    )


def add_to_server(stream: Callable[..., object], server: grpc.aio.Server) -> None:
    """Serve `stream` (EventReceiver.Stream) as lens.v1.ContainerEvents/Stream."""
    handler = grpc.stream_stream_rpc_method_handler(
        stream,
        request_deserializer=wire.parse_batch,
        response_serializer=pb.Ack.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE, {"Stream": handler}),)
    )


class TokenCheck:
    """The bearer token agents must send, re-read from its file when an agent's does not match."""

    def __init__(self, read: Callable[[], str]) -> None:
        self._read = read
        self._token = read()

    def allows(self, metadata: tuple[tuple[str, str | bytes], ...] | None) -> bool:
        sent = next((str(v) for k, v in metadata or () if k == "authorization"), "")
        if self._matches(sent):
            return True
        self._token = self._read()
        return self._matches(sent)

    def _matches(self, sent: str) -> bool:
        expected = f"Bearer {self._token}"
        return bool(self._token) and hmac.compare_digest(sent.encode(), expected.encode())
