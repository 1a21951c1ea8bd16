"""`lens jobs`: the gRPC event server (container events, device reports), writing to the store.

`build()` adds the role to a process (tests start it on free ports against a test database);
`ROLE` is what the CLI launches. The periodic jobs of REFERENCE.md section 5 join this role as
loops whose bodies live in their domains (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

import kubernetes
import peewee

from lens.containers.server import serving
from lens.containers.server.receiving import EventReceiver, ReceiverMetrics
from lens.containers.server.recording import EventRecorder
from lens.containers.server.serving import TokenCheck
from lens.roles.jobs import (
    allocation,
    cluster,
    consumers,
    dailyreport,
    gpuhours,
    idling,
    leading,
    multistorage,
    nodeinfo,
    reporting,
    retention,
    storagescan,
    telemetry,
    workloadstatus,
)
from lens.runtime import grpcserver, listening, tokenfile
from lens.runtime.config import Config, JobsConfig
from lens.runtime.launcher import Role
from lens.runtime.process import Process
from lens.store import shared

log = logging.getLogger(__name__)

EVENT_SERVER = listening.Endpoint(
    purpose="the event server (gRPC)", host_key="jobs.grpc_host", port_key="jobs.grpc_port"
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Jobs:
    process: Process
    grpc: grpcserver.GrpcServer
    db: peewee.Database


def _token(cfg: JobsConfig) -> TokenCheck | None:
    if not cfg.token_file:
        return None
    tokens = tokenfile.configured(cfg.token_file, key="jobs.token_file")
    return TokenCheck(tokens.read)


def build(
    config: Config, process: Process, *, api: kubernetes.client.ApiClient | None = None
) -> Jobs:
    """Add the event server to `process`: database opened (and migrated unless told not to),
    server not started. `api`: the Kubernetes API for the jobs Lease and the cluster's watch
    caches (default: per config.kube, when jobs.lease or jobs.watch_cluster asks for it)."""
    db = shared.shared_database(config.database, process)
    leads = leading.add(config, process, api=api)
    retention.add(config.jobs, process, leading=leads)
    idling.add(config, process, db, leading=leads)
    consumers.add(config, process, db, leading=leads)
    gpuhours.add(config, process, db, leading=leads)
    dailyreport.add(config, process, db, leading=leads)
    _add_cluster_jobs(config, process, db, leads, api)
    telemetry.add(config, process, db)
    receiver = EventReceiver(
        EventRecorder(db, cluster=config.cluster.name),
        metrics=ReceiverMetrics(process.metrics),
        batch_records=config.jobs.batch_records,
        token=_token(config.jobs),
        wall_time=process.clock.time,
        extensions=[reporting.add(config, process, db, leading=leads)],
    )
    server = grpcserver.GrpcServer(
        name="event-server",
        host=config.jobs.grpc_host,
        port=config.jobs.grpc_port,
        endpoint=EVENT_SERVER,
        credentials=grpcserver.server_credentials(
            config.jobs.tls_cert_file, config.jobs.tls_key_file
        ),
    )
    server.register(lambda s: serving.add_to_server(receiver.Stream, s))
    process.add_part(server)
    process.tune_for_throughput()
    return Jobs(process=process, grpc=server, db=db)


def _add_cluster_jobs(
    config: Config,
    process: Process,
    db: peewee.Database,
    leads: Callable[[], bool],
    api: kubernetes.client.ApiClient | None,
) -> None:
    """The jobs that read the cluster, on its watch caches, when it is watched."""
    caches = cluster.add(config, process, api=api)
    if caches is None:
        return
    allocation.add(config, process, caches, leading=leads)
    nodeinfo.add(config, process, caches, db, leading=leads)
    workloadstatus.add(config, process, caches, db, leading=leads)
    storagescan.add(config, process, db, api=caches.api, leading=leads)
    multistorage.add(config, process, api=caches.api, leading=leads)


ROLE = Role(
    name="jobs",
    starting="jobs starting",
    sections=("cluster", "server", "jobs", "kube", "controller", "metrics", "telemetry"),
    build=build,
)
