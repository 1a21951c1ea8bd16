"""The runtime every role starts from: Service, HTTP port, health, metrics and periodic loops.

A role's main.py calls `build()` with its config sections and own loops, registers its readiness
checks, metric sources and parts, then calls `kit.service.run()`.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

from lens.runtime import exposition, httpserver
from lens.runtime.clock import Clock, SystemClock
from lens.runtime.config import ServerConfig, ServiceConfig
from lens.runtime.health import Health
from lens.runtime.lifecycle import Service
from lens.runtime.periodic import Loop, LoopMetrics, PeriodicRunner
from lens.runtime.selfmetrics import SelfMetrics


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RoleKit:
    clock: Clock
    metrics: SelfMetrics
    health: Health
    cache: exposition.ExpositionCache
    publisher: exposition.MetricsPublisher
    http: httpserver.OpsServer
    loops: PeriodicRunner
    service: Service


def _housekeeping(
    service: ServiceConfig, publisher: exposition.MetricsPublisher, health: Health
) -> tuple[Loop, ...]:
    interval = service.metrics_interval_seconds
    return (
        Loop(
            name="metrics",
            interval_seconds=interval,
            run=lambda: publisher.publish_if_older_than(interval),
        ),
        Loop(
            name="readiness",
            interval_seconds=service.readiness_interval_seconds,
            run=health.evaluate_readiness,
        ),
    )


def build(
    name: str,
    *,
    server: ServerConfig,
    service: ServiceConfig,
    loops: Sequence[Loop] = (),
    clock: Clock | None = None,
    rng: random.Random | None = None,
    handle_signals: bool = True,
) -> RoleKit:
    """Wire the shared parts of role `name`; the role's `loops` run beside the housekeeping ones.

    Housekeeping: `metrics` renders /metrics from the sources every metrics interval (a role's
    collection cycle may publish sooner) and `readiness` refreshes what /readyz answers.
    """
    clock = clock or SystemClock()
    metrics = SelfMetrics()
    health = Health(
        clock=clock, metrics=metrics, stale_after=3 * service.readiness_interval_seconds + 10
    )
    cache = exposition.ExpositionCache()
    publisher = exposition.MetricsPublisher(cache, wall_time=clock.time)
    publisher.add(metrics.registry)
    svc = Service(name, stop_timeout=service.stop_timeout_seconds, handle_signals=handle_signals)
    runner = PeriodicRunner(
        (*_housekeeping(service, publisher, health), *loops),
        clock=clock,
        metrics=LoopMetrics(metrics),
        jitter_ratio=service.loop_jitter_ratio,
        rng=rng,
        on_fatal=svc.fail,
    )
    routes = httpserver.ops_routes(health, cache)
    http = httpserver.OpsServer(host=server.host, port=server.port, routes=routes, metrics=metrics)
    health.add_liveness("event_loop", svc.event_loop_stalled)
    health.add_liveness("loops", runner.stalled)
    svc.add(runner)
    svc.add(http)
    return RoleKit(
        clock=clock,
        metrics=metrics,
        health=health,
        cache=cache,
        publisher=publisher,
        http=http,
        loops=runner,
        service=svc,
    )
