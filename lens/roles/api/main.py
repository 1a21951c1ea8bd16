"""`lens api`: the REST API /v1 on its own port (api.*), read from the store; the process's ops
port keeps /healthz, /readyz (the database) and /metrics (requests by route and status).

`build()` adds the role to a process (tests start it on free ports against a test database);
`ROLE` is what the CLI launches. Stateless: any number of replicas may serve one database.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

import peewee
from fastapi import FastAPI

from lens.kube.machinery import clients, tokenreviews
from lens.kube.machinery.tokenreviews import Review
from lens.roles.api import auth, serving
from lens.roles.api.app import create_app
from lens.roles.api.requestmetrics import RequestMetrics
from lens.roles.api.reviewcache import ReviewCache
from lens.roles.api.routers.params import Context
from lens.runtime import errors
from lens.runtime.config import Config
from lens.runtime.config.api import is_loopback
from lens.runtime.launcher import Role
from lens.runtime.process import Process
from lens.store import shared

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Api:
    process: Process
    app: FastAPI
    server: serving.ApiServer
    db: peewee.Database
    authenticated: bool


def authenticator_of(config: Config, process: Process) -> auth.Authenticator | None:
    """Who may read the API: the token file's tokens and, with api.token_review, whoever the
    API server vouches for. None (no token asked) only when the API listens on loopback, where
    no other machine reaches it (ConfigError otherwise)."""
    cfg = config.api
    digests = auth.configured(cfg.token_file, key="api.token_file") if cfg.token_file else None
    reviews = _reviews(config, process) if cfg.token_review else None
    if digests is None and reviews is None:
        if is_loopback(cfg.host):
            return None
        raise errors.ConfigError(
            source="config",
            key="api.token_file",
            expected=(
                f"a token file or api.token_review: the API listens on {cfg.host!r}, beyond "
                "loopback, and serves no one without a bearer token there (or set api.host "
                "to 127.0.0.1)"
            ),
        )
    return auth.Authenticator(digests=digests, reviews=reviews, allowed_groups=cfg.allowed_groups)


def _reviews(config: Config, process: Process) -> Callable[[str], Review]:
    """TokenReviews of the cluster kube.* names, each token's kept a while (reviewcache.py)."""
    api = clients.connect(config.kube)  # lives as long as the process
    audiences = config.api.token_review_audiences
    cache = ReviewCache(
        lambda token: tokenreviews.review(api, token, audiences=audiences),
        seconds=config.api.token_review_cache_seconds,
        monotonic=process.clock.monotonic,
    )
    return cache.review


def build(
    config: Config,
    process: Process,
    *,
    simulated: bool = False,
    clock_rate: Callable[[], float] = lambda: 1.0,
) -> Api:
    """Add the API to `process`: tokens read, database opened (and migrated), app made,
    server not started. `simulated`: the cluster is `lens demo`'s, whose clock runs
    `clock_rate()` times as fast as real time now (/v1/about tells the dashboard)."""
    tokens = authenticator_of(config, process)
    db = shared.shared_database(config.database, process)
    context = Context(
        db=db,
        cluster=config.cluster.name,
        max_page_size=config.api.max_page_size,
        wall_time=process.clock.time,
        consumers_window_minutes=config.jobs.consumers_utilization_minutes,
        team_label=config.jobs.team_label,
        cors_origins=config.api.cors_origins,
        simulated=simulated,
        clock_rate=clock_rate,
    )
    app = create_app(context=context, metrics=RequestMetrics(process.metrics), tokens=tokens)
    limits = serving.ServerLimits(
        idle_timeout_seconds=config.server.idle_timeout_seconds,
        max_connections=config.server.max_connections,
        graceful_shutdown_seconds=config.api.graceful_shutdown_seconds,
    )
    server = serving.ApiServer(
        app,
        host=config.api.host,
        port=config.api.port,
        limits=limits,
        on_failure=lambda exc: process.service.fail(exc, part=serving.ApiServer.name),
    )
    process.add_part(server)
    # A workload's day of series makes tens of thousands of objects an answer: with start-up's
    # objects left in every collection, each few answers paid a full one (PERFORMANCE.md).
    process.tune_for_throughput()
    return Api(process=process, app=app, server=server, db=db, authenticated=tokens is not None)


def _describe(api: Api) -> dict[str, object]:
    return {"authenticated": api.authenticated}


ROLE = Role(
    name="api",
    starting="api starting",
    sections=("cluster", "server", "api", "kube", "jobs"),
    build=build,
    describe=_describe,
)
