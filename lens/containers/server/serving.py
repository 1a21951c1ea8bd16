"""The event server's gRPC registration: messages parsed leniently, so that one that is not a
lens.v1 EventBatch is answered INVALID_ARGUMENT, counted by reason and logged at most once a
minute per reason, instead of gRPC's UNKNOWN with a traceback per message.

containers/server/receiving.py's EventReceiver is the servicer; roles/jobs registers it here.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import grpc
from prometheus_client import Counter

from lens.containers import wire
from lens.proto._generated.lens.v1 import events_pb2 as pb

log = logging.getLogger(__name__)

SERVICE = "lens.v1.ContainerEvents"
LOG_EVERY_SECONDS = 60.0


class Refusals:
    """Counts refused messages by reason; logs the first of each reason and then at most one
    line a minute, with how many were refused meanwhile."""

    def __init__(
        self, counter: Counter, *, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self._counter = counter
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._logged: dict[str, float] = {}
        self._quiet: dict[str, int] = {}

    def refuse(self, reason: str, *, peer: str) -> None:
        self._counter.labels(reason).inc()
        now = self._monotonic()
        with self._lock:
            last = self._logged.get(reason)
            if last is not None and now - last < LOG_EVERY_SECONDS:
                self._quiet[reason] = self._quiet.get(reason, 0) + 1
                return
            self._logged[reason] = now
            since = self._quiet.pop(reason, 0)
        log.warning(
            "refused a message that is no event batch",
            extra={"reason": reason, "peer": peer, "refused_since_last_line": since},
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
