"""The remote-write receiver of `lens jobs` (POST /v1/prometheus, the original's path, and
/api/v1/write): the protocol chosen by Content-Type, the body rewritten with workload labels and
queued for the forwarder, answered as the 1.0 and 2.0 specs ask."""

from __future__ import annotations

import dataclasses
import json
import logging

from lens.runtime.httpserver import Request, Response
from lens.runtime.selfmetrics import SelfMetrics
from lens.runtime.throttle import LogThrottle
from lens.telemetry.remotewrite.forwarding import Forwarder
from lens.telemetry.remotewrite.protocol import (
    BadRequest,
    UnsupportedMediaType,
    Version,
    decompress,
    version_of,
)
from lens.telemetry.remotewrite.rewriting import Rewriter

log = logging.getLogger(__name__)

PATHS = ("/v1/prometheus", "/api/v1/write")


class ReceiverMetrics:
    def __init__(self, metrics: SelfMetrics) -> None:
        self.samples = metrics.counter(
            "lens_remote_write_received_samples_total",
            "Samples (with histograms and exemplars) received by remote write, by protocol.",
            ("protocol",),
        )
        self.series = metrics.counter(
            "lens_remote_write_received_series_total",
            "Series received by remote write, by whether workload labels were added "
            "(enriched: true or false).",
            ("enriched",),
        )
        self.refused = metrics.counter(
            "lens_remote_write_refused_requests_total",
            "Remote-write requests refused, by reason: bad_request (400), unsupported (415), "
            "queue_full (503, the sender retries).",
            ("reason",),
        )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Receiver:
    """The route handler; `max_bytes` bounds a body once decompressed."""

    rewriter: Rewriter
    forwarder: Forwarder
    forward_as: Version
    metrics: ReceiverMetrics
    max_bytes: int
    warnings: LogThrottle = dataclasses.field(default_factory=LogThrottle)

    def __call__(self, request: Request) -> Response:
        try:
            received = version_of(request.header("content-type"))
            raw = decompress(
                request.body, request.header("content-encoding"), max_bytes=self.max_bytes
            )
            rewritten = self.rewriter.rewrite(raw, received=received, to=self.forward_as)
        except UnsupportedMediaType as exc:
            return self._refuse("unsupported", 415, str(exc), request)
        except BadRequest as exc:
            return self._refuse("bad_request", 400, str(exc), request)
        written = rewritten.samples + rewritten.histograms + rewritten.exemplars
        # A request of metadata alone (Prometheus sends them apart) is forwarded too.
        if rewritten.body and not self.forwarder.offer(rewritten.body, written):
            self.metrics.refused.labels("queue_full").inc()
            return Response(
                status=503,
                body=_error("the forwarding queue is full; retry later"),
                headers={"Retry-After": "5"},
            )
        self.metrics.samples.labels(received.value).inc(written)
        self.metrics.series.labels("true").inc(rewritten.relabelled)
        self.metrics.series.labels("false").inc(rewritten.series - rewritten.relabelled)
        headers = {}
        if received is Version.V2:
            headers = {
                "X-Prometheus-Remote-Write-Samples-Written": str(rewritten.samples),
                "X-Prometheus-Remote-Write-Histograms-Written": str(rewritten.histograms),
                "X-Prometheus-Remote-Write-Exemplars-Written": str(rewritten.exemplars),
            }
        return Response(status=204, body=b"", content_type="text/plain", headers=headers)

    def _refuse(self, reason: str, status: int, message: str, request: Request) -> Response:
        self.metrics.refused.labels(reason).inc()
        untold = self.warnings.due(reason)
        if untold is not None:
            log.warning(
                "remote-write request refused",
                extra={
                    "status": status,
                    "reason": message,
                    "client": request.client,
                    "untold_since": untold,
                },
            )
        return Response(status=status, body=_error(message))


def _error(message: str) -> bytes:
    return json.dumps({"error": message}).encode()
