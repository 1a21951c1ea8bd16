"""`lens jobs`: wires the gRPC container event server to the store, with /metrics and health.

`build()` assembles the role (tests start it on free ports against a test database); `run()` is
what the CLI calls. The periodic jobs of REFERENCE.md section 5 join this role in a later issue.
"""

from __future__ import annotations

import dataclasses
import logging

import peewee

from lens.containers.receiving import EventReceiver, ReceiverMetrics, TokenCheck
from lens.containers.recording import EventRecorder
from lens.proto._generated.lens.v1 import events_pb2_grpc
from lens.runtime import grpcserver, interpreter, kit, settings, tokenfile
from lens.runtime.clock import Clock
from lens.runtime.config import Config, JobsConfig
from lens.store import database, migrating

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Jobs:
    kit: kit.RoleKit
    grpc: grpcserver.GrpcServer
    db: peewee.Database


def _token(cfg: JobsConfig) -> TokenCheck | None:
    if not cfg.token_file:
        return None
    tokens = tokenfile.configured(cfg.token_file, key="jobs.token_file")
    return TokenCheck(tokens.read)


def build(config: Config, *, clock: Clock | None = None, handle_signals: bool = True) -> Jobs:
    """The assembled role: database opened (and migrated unless told not to), server not started."""
    role = kit.build(
        "jobs",
        server=config.server,
        service=config.service,
        clock=clock,
        handle_signals=handle_signals,
    )
    db = migrating.open_for_role(config.database)
    receiver = EventReceiver(
        EventRecorder(db, cluster=config.cluster.name),
        metrics=ReceiverMetrics(role.metrics),
        batch_records=config.jobs.batch_records,
        token=_token(config.jobs),
        wall_time=role.clock.time,
    )
    server = grpcserver.GrpcServer(
        name="event-server",
        host=config.jobs.grpc_host,
        port=config.jobs.grpc_port,
        credentials=grpcserver.server_credentials(
            config.jobs.tls_cert_file, config.jobs.tls_key_file
        ),
    )
    server.register(
        lambda s: events_pb2_grpc.add_ContainerEventsServicer_to_server(receiver, s)  # type: ignore[no-untyped-call]
    )
    role.service.add(server)
    role.health.add_readiness("database", lambda: database.ping(db))
    return Jobs(kit=role, grpc=server, db=db)


def run(config: Config) -> int:
    """`lens jobs`: run until SIGTERM; the exit code of the service."""
    jobs = build(config)
    log.info(
        "jobs starting",
        extra={
            "config": {
                section: settings.to_plain(getattr(config, section))
                for section in ("cluster", "server", "jobs")
            }
        },
    )
    interpreter.tune_for_throughput()
    return jobs.kit.service.run()
