"""Send the outbox to the jobs event server over gRPC and drop what the server acknowledged.

One stream at a time from one thread: batches go out in order, acknowledgements come back, and
after any error the stream is reopened with backoff from the oldest unacknowledged record. The
server ignores what it already committed, so resending is always safe.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc

from lens.containers import wire
from lens.containers.node.outbox import Outbox
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.runtime import errors, tokenfile
from lens.runtime.backoff import Backoff
from lens.runtime.config import EventsConfig
from lens.runtime.selfmetrics import SelfMetrics

log = logging.getLogger(__name__)

_TAKE_WAIT_SECONDS = 0.2
# gRPC servers refuse messages over 4 MiB unless told otherwise: a batch stays well below, whatever
# events.batch_records says (a whole-node container's event takes about 750 bytes).
MAX_BATCH_BYTES = 2 * 1024 * 1024
_STREAM_METHOD = "/{}/{}".format(
    pb.DESCRIPTOR.services_by_name["ContainerEvents"].full_name,
    pb.DESCRIPTOR.services_by_name["ContainerEvents"].methods_by_name["Stream"].name,
)


class ShipperMetrics:
    def __init__(self, metrics: SelfMetrics) -> None:
        self.sent = metrics.counter(
            "lens_events_sent_total", "Container event records sent to the event server."
        )
        self.acknowledged = metrics.counter(
            "lens_events_acknowledged_total", "Records the event server confirmed it committed."
        )
        self.connections = metrics.counter(
            "lens_events_connections_total",
            "Streams opened to the event server, by result.",
            ("result",),
        )
        self.connected = metrics.gauge(
            "lens_events_connected", "1 while a stream to the event server is open."
        )
        self.dropped = metrics.counter(
            "lens_events_dropped_total",
            "Container events dropped unsent because the outbox was full.",
        )
        self.buffered = metrics.gauge(
            "lens_events_buffered", "Container events waiting for the server's acknowledgement."
        )


def channel_credentials(cfg: EventsConfig) -> grpc.ChannelCredentials | None:
    """TLS credentials when events.tls is on; ConfigError when the CA file cannot be read."""
    if not cfg.tls:
        return None
    root = None
    if cfg.ca_file:
        try:
            root = Path(cfg.ca_file).read_bytes()
        except OSError as exc:
            raise errors.ConfigError(
                source="config", key="events.ca_file", expected=f"a readable CA file ({exc})"
            ) from exc
    return grpc.ssl_channel_credentials(root_certificates=root)


class EventShipper:
    """Streams `outbox` to the server at cfg.server_address until `stop()`."""

    def __init__(
        self,
        cfg: EventsConfig,
        *,
        outbox: Outbox,
        node: str,
        metrics: ShipperMetrics,
        backoff: Backoff | None = None,
    ) -> None:
        self._cfg = cfg
        self._outbox = outbox
        self._node = node
        self._metrics = metrics
        self._backoff = backoff or Backoff(initial=0.2, maximum=10.0)
        self._credentials = channel_credentials(cfg)
        self._token = tokenfile.TokenFile(cfg.token_file)
        self._stop = threading.Event()
        self._call: grpc.Future | None = None
        self._thread: threading.Thread | None = None
        self.streams = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="event-shipper", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        call = self._call
        if call is not None:
            call.cancel()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        failing = False
        while not self._stop.is_set():
            try:
                self._stream()
                failing = False
            except (grpc.RpcError, errors.SourceError) as exc:
                self._metrics.connected.set(0)
                if self._stop.is_set():
                    break
                self._metrics.connections.labels("error").inc()
                if not failing:
                    log.warning(
                        "event server unreachable; events kept", extra={"reason": _why(exc)}
                    )
                failing = True
                self._stop.wait(self._backoff.next_delay(exc))
        self._metrics.connected.set(0)

    def _stream(self) -> None:
        token = self._token.read()  # a rotated token is picked up on the next connection
        metadata = (("authorization", f"Bearer {token}"),) if token else ()
        address = self._cfg.server_address
        with self._channel(address) as channel:
            # Batches go out as wire.batch frames them (bytes), acknowledgements come back parsed.
            stream = channel.stream_stream(_STREAM_METHOD, response_deserializer=pb.Ack.FromString)
            call = stream(self._batches(), metadata=metadata)
            self._call = call
            if self._stop.is_set():
                call.cancel()
            opened = False
            for ack in call:
                if not opened:
                    opened = True
                    self._connected()
                removed = self._outbox.acknowledge(ack.boot_id, ack.committed_sequence)
                self._metrics.acknowledged.inc(removed)
        if not self._stop.is_set():
            raise errors.SourceError("event server closed the stream")

    def _connected(self) -> None:
        self.streams += 1
        self._backoff.reset()
        self._metrics.connected.set(1)
        self._metrics.connections.labels("ok").inc()
        log.info("event stream open", extra={"server": self._cfg.server_address})

    def _channel(self, address: str) -> grpc.Channel:
        options = [("grpc.keepalive_time_ms", 30_000), ("grpc.keepalive_timeout_ms", 10_000)]
        if self._credentials is None:
            return grpc.insecure_channel(address, options=options)
        return grpc.secure_channel(address, self._credentials, options=options)

    def _batches(self) -> Iterator[bytes]:
        # An empty batch first: the server answers with what it committed for this boot, which
        # opens the stream even when there is nothing to send.
        yield wire.batch(self._node, self._outbox.boot_id, ())
        position = self._outbox.first_position()
        while not self._stop.is_set():
            position, entries = self._outbox.take(
                position, self._cfg.batch_records, _TAKE_WAIT_SECONDS, max_bytes=MAX_BATCH_BYTES
            )
            if not entries:
                continue
            self._metrics.sent.inc(len(entries))
            yield wire.batch(self._node, entries[0].boot_id, [e.data for e in entries])


def _why(exc: BaseException) -> str:
    if isinstance(exc, grpc.RpcError):
        return f"{exc.code().name}: {exc.details()}"
    return str(exc)
