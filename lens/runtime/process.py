"""One `lens` process, which roles add their parts to: loops, checks, metrics, routes, servers.

runtime/launcher.py makes a Process, has each role's `build(config, process)` add to it, then
runs it. What is process-wide lives here once: the Service (signals, stop in reverse order
within `service.stop_timeout_seconds`), the one HTTP port with /metrics, /healthz and /readyz,
the one metrics registry, the periodic runner, interpreter tuning, and resources roles share
(one database for controller and jobs). A role never installs signal handlers or changes
process-wide settings itself; it asks the process.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TypeVar, cast

from lens.runtime import exposition, httpserver, interpreter
from lens.runtime.clock import Clock, SystemClock
from lens.runtime.config import ServerConfig, ServiceConfig
from lens.runtime.health import Health
from lens.runtime.lifecycle import Part, Service
from lens.runtime.periodic import Loop, LoopMetrics, PeriodicRunner
from lens.runtime.selfmetrics import SelfMetrics

T = TypeVar("T")


class Process:
    """The shared parts of one process; roles add theirs with the `add_*` methods."""

    def __init__(
        self,
        name: str,
        *,
        server: ServerConfig,
        service: ServiceConfig,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        handle_signals: bool = True,
        process_metrics: bool = True,
        publish_metrics: bool = True,
    ) -> None:
        """`process_metrics`: export the OS process's CPU, memory and open files (off for a
        process run inside another, whose are the same). `publish_metrics`: render /metrics
        from the sources (off for a process that is built but never run, whose port nobody
        reads: lens demo's node agents, a hundred renders a cycle otherwise)."""
        self.name = name
        self.clock = clock or SystemClock()
        self.metrics = SelfMetrics(process=process_metrics)
        self.health = Health(
            clock=self.clock,
            metrics=self.metrics,
            stale_after=3 * service.readiness_interval_seconds + 10,
        )
        self.cache = exposition.ExpositionCache()
        self.publisher = exposition.MetricsPublisher(
            self.cache, wall_time=self.clock.time, enabled=publish_metrics
        )
        self.publisher.add(self.metrics.registry)
        self.service = Service(
            name, stop_timeout=service.stop_timeout_seconds, handle_signals=handle_signals
        )
        self.loops = PeriodicRunner(
            _housekeeping(service, publisher=self.publisher, health=self.health),
            clock=self.clock,
            metrics=LoopMetrics(self.metrics),
            jitter_ratio=service.loop_jitter_ratio,
            rng=rng,
            on_fatal=lambda loop, exc: self.service.fail(exc, part=f"loop {loop}"),
        )
        self.http = httpserver.OpsServer(
            host=server.host,
            port=server.port,
            routes=httpserver.ops_routes(self.health, self.cache),
            metrics=self.metrics,
            read_timeout_seconds=server.read_timeout_seconds,
            idle_timeout_seconds=server.idle_timeout_seconds,
            max_connections=server.max_connections,
            max_body_bytes=server.max_body_bytes,
        )
        self.health.add_liveness("event_loop", self.service.event_loop_stalled)
        self.health.add_liveness("loops", self.loops.stalled)
        # Which role added each part and loop, to name the role when one fails.
        self.building = ""
        self._owners: dict[str, str] = {self.http.name: "", self.loops.name: ""}
        self._shared: dict[str, object] = {}
        self._throughput = False
        # The HTTP port starts first and stops last; the loops start after every role's parts
        # and stop before them, so no loop runs on a part that has stopped.
        self.service.add(self.http)
        self.service.add(self.loops)

    def add_part(self, part: Part) -> None:
        """A part started after those added before it (and before the loops), stopped before
        them (and after the loops); part names are unique in the process."""
        if part.name in self._owners:
            raise ValueError(f"part {part.name!r} is added twice")
        self._owners[part.name] = self.building
        self.service.add(part, before=self.loops)

    def add_loop(self, loop: Loop) -> None:
        """A periodic loop on the process's runner; loop names are unique in the process."""
        self.loops.add(loop)
        self._owners[f"loop {loop.name}"] = self.building

    def add_route(self, path: str, handler: httpserver.Handler, *, method: str = "GET") -> None:
        """A GET (or POST) route on the process's one HTTP port; a path and method are served by
        one role only."""
        self.http.add_route(path, handler, method=method)

    def shared(self, key: str, make: Callable[[], T]) -> T:
        """The resource `key` made once for every role that asks (the database of a URL)."""
        if key not in self._shared:
            self._shared[key] = make()
        return cast(T, self._shared[key])

    def tune_for_throughput(self) -> None:
        """Ask for the interpreter tuning of runtime/interpreter.py; the launcher applies it
        once, after every role is built, whichever roles asked."""
        self._throughput = True

    def apply_tuning(self) -> None:
        if self._throughput:
            interpreter.tune_for_throughput()

    def failed(self) -> str | None:
        """The part that failed, named with its role ("jobs: event-server: OSError: ..."), or
        None."""
        failure = self.service.failure
        if failure is None:
            return None
        role = self._owners.get(failure.part)
        where = f"{role}: {failure.part}" if role else failure.part
        return f"{where}: {failure.error}"

    def run(self) -> int:
        """Run every part until stopped; the exit code (service.failure names a failed part)."""
        return self.service.run()


def _housekeeping(
    service: ServiceConfig, *, publisher: exposition.MetricsPublisher, health: Health
) -> tuple[Loop, ...]:
    """`metrics` renders /metrics from the sources every metrics interval (a role's collection
    cycle may publish sooner) and `readiness` refreshes what /readyz answers."""
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
