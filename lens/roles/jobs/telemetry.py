"""`lens jobs`' telemetry intake on its HTTP port: Prometheus remote write enriched with
workloads and forwarded (POST /v1/prometheus, /api/v1/write) and training logs into
training_performance (POST /v1/logs), with stragglers found in them (docs/telemetry.md).

Every replica serves the intake (a Service spreads senders over them); the enrichment index is
each replica's own, kept current from the database by a loop.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import peewee

from lens.containers.server.serving import TokenCheck
from lens.roles.jobs.straggling import Stragglers
from lens.runtime import errors, tokenfile
from lens.runtime.config import Config, TelemetryConfig
from lens.runtime.httpserver import Handler, Request, Response
from lens.runtime.periodic import Loop
from lens.runtime.process import Process
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import database
from lens.telemetry.enrichment.loading import IndexLoader, RefreshStats
from lens.telemetry.enrichment.relabeling import WorkloadRelabeler
from lens.telemetry.enrichment.settings import EnrichmentSettings
from lens.telemetry.enrichment.shared import SharedIndex
from lens.telemetry.remotewrite import receiving
from lens.telemetry.remotewrite.forwarding import Forwarder, ForwardMetrics, ForwardSettings
from lens.telemetry.remotewrite.protocol import Version
from lens.telemetry.remotewrite.rewriting import Rewriter
from lens.telemetry.trainlogs import records
from lens.telemetry.trainlogs.intake import IntakeSettings, LogIntake
from lens.usage import workloads

log = logging.getLogger(__name__)

LOGS_PATH = "/v1/logs"
# A decompressed remote-write body may be this many times the largest body taken: protobuf of
# series compresses 3-6x with snappy; a bound stops a small hostile body from expanding far.
_EXPANSION = 8


def add(config: Config, process: Process, db: peewee.Database) -> None:
    """The intake routes and parts the telemetry section asks for."""
    guard = _guard(config.telemetry)
    if config.telemetry.remote_write_url:
        for path, handler in _add_remote_write(config, process, db).items():
            process.add_route(path, guard(handler), method="POST")
    if config.telemetry.logs_enabled:
        process.add_route(LOGS_PATH, guard(_add_logs(config, process, db)), method="POST")


def _guard(telemetry: TelemetryConfig) -> Callable[[Handler], Handler]:
    """Handlers answering 401 unless the request bears telemetry.token_file's token."""
    if not telemetry.token_file:
        return lambda handler: handler
    check = TokenCheck(tokenfile.configured(telemetry.token_file, key="telemetry.token_file").read)

    def guard(handler: Handler) -> Handler:
        def guarded(request: Request) -> Response:
            sent = request.header("authorization") or ""
            if not check.allows((("authorization", sent),)):
                return Response(
                    status=401,
                    body=json.dumps({"error": "a bearer token is required"}).encode(),
                    headers={"WWW-Authenticate": "Bearer"},
                )
            return handler(request)

        return guarded

    return guard


def _add_remote_write(config: Config, process: Process, db: peewee.Database) -> dict[str, Handler]:
    telemetry = config.telemetry
    settings = EnrichmentSettings(
        cluster=config.cluster.name,
        max_pods=telemetry.enrichment_max_pods,
        ended_grace_seconds=telemetry.enrichment_ended_grace_seconds,
        team_label=telemetry.team_label_name,
        team_label_key=config.jobs.team_label,
        rename_like_original=telemetry.rename_like_original,
    )
    index = SharedIndex()
    loader = IndexLoader(db, settings=settings, shared=index, top_workloads=workloads.top_workloads)
    metrics = process.metrics
    index_metrics = IndexMetrics(metrics)
    process.add_loop(
        Loop(
            name="enrichment",
            interval_seconds=telemetry.enrichment_refresh_seconds,
            run=lambda: index_metrics.show(_refresh(loader, db)),
        )
    )
    forwarder = Forwarder(_forward_settings(telemetry), metrics=ForwardMetrics(metrics))
    process.add_part(forwarder)
    receiver = receiving.Receiver(
        rewriter=Rewriter(WorkloadRelabeler(index, settings)),
        forwarder=forwarder,
        forward_as=Version(telemetry.remote_write_protocol),
        metrics=receiving.ReceiverMetrics(metrics),
        max_bytes=config.server.max_body_bytes * _EXPANSION,
    )
    return dict.fromkeys(receiving.PATHS, receiver)


def _refresh(loader: IndexLoader, db: peewee.Database) -> RefreshStats:
    with database.session(db):
        return loader.refresh()


class IndexMetrics:
    def __init__(self, metrics: SelfMetrics) -> None:
        self.pods = metrics.gauge(
            "lens_enrichment_pods", "Pods the remote-write enrichment index holds."
        )
        self.rows = metrics.counter(
            "lens_enrichment_rows_read_total",
            "Rows the enrichment index read from the database, by table.",
            ("table",),
        )
        self.dropped = metrics.counter(
            "lens_enrichment_pods_dropped_total",
            "Pods dropped from the enrichment index, by reason: expired (ended longer than "
            "telemetry.enrichment_ended_grace_seconds) or evicted (past "
            "telemetry.enrichment_max_pods).",
            ("reason",),
        )

    def show(self, stats: RefreshStats) -> None:
        self.pods.set(stats.pods)
        self.rows.labels("gpu_pods").inc(stats.pods_read)
        self.rows.labels("node_containers").inc(stats.containers_read)
        self.rows.labels("gpu_devices").inc(stats.gpus_read)
        self.rows.labels("gpu_workloads").inc(stats.workloads_read)
        self.dropped.labels("expired").inc(stats.expired)
        self.dropped.labels("evicted").inc(stats.evicted)


def _forward_settings(telemetry: TelemetryConfig) -> ForwardSettings:
    token = (
        tokenfile.configured(
            telemetry.remote_write_bearer_token_file, key="telemetry.remote_write_bearer_token_file"
        )
        if telemetry.remote_write_bearer_token_file
        else None
    )

    def bearer() -> str:
        if token is None:
            return ""
        try:
            return token.read()
        except errors.SourceError as exc:
            log.warning("remote-write token unreadable", extra={"error": str(exc)})
            return ""

    return ForwardSettings(
        url=telemetry.remote_write_url,
        version=Version(telemetry.remote_write_protocol),
        timeout_seconds=telemetry.remote_write_timeout_seconds,
        queue_requests=telemetry.remote_write_queue_requests,
        max_samples_per_send=telemetry.remote_write_max_samples_per_send,
        give_up_seconds=telemetry.remote_write_give_up_seconds,
        bearer_token=bearer,
    )


def _add_logs(config: Config, process: Process, db: peewee.Database) -> Handler:
    stragglers = Stragglers(config, process, db)
    intake = LogIntake(
        db,
        IntakeSettings(
            cluster=config.cluster.name, queue_records=config.telemetry.logs_queue_records
        ),
        metrics=process.metrics,
        clock=process.clock,
        observers=[stragglers.observe],
        on_failure=lambda exc: process.service.fail(exc, part="training-logs"),
    )
    process.add_part(intake)
    limits = records.RecordLimits(max_bytes=config.server.max_body_bytes * _EXPANSION)

    def take(request: Request) -> Response:
        try:
            parsed = records.parse_body(
                request.body,
                received_at=process.clock.time(),
                content_encoding=request.header("content-encoding") or "",
                limits=limits,
            )
        except records.UnsupportedEncoding as exc:
            return _envelope(415, 4001, str(exc))
        except records.RecordsError as exc:
            return _envelope(400, 4001, str(exc))
        if not intake.offer(parsed):
            answer = _envelope(503, 5000, "the log queue is full; retry later")
            return Response(status=503, body=answer.body, headers={"Retry-After": "5"})
        return _envelope(200, 2000, "OK", {"records": len(parsed.records)})

    return take


def _envelope(status: int, code: int, message: str, data: object = None) -> Response:
    """The original's envelope (REFERENCE.md 1.3), which its log senders were pointed at."""
    body = {"meta": {"code": code, "message": message}, "data": data, "tracing": None}
    return Response(status=status, body=json.dumps(body).encode())
