"""Refreshing the node's GPU vendors and static facts, at start and on the `statics` loop.

main.py runs a StaticRefresh before the first cycle and every `static_refresh_seconds`. It is
counted as the collector `static_facts` in the lens_collector_* self-metrics (tools that failed
while sysfs answered are its problems), and a refresh that failed outright shows in /readyz
(check `static_facts`). Nothing it reads, however garbled, stops the agent from starting.
"""

from __future__ import annotations

import logging

from lens.devices.statics import StaticFactsSource
from lens.devices.vendors import VendorPresence
from lens.roles.node_agent.cycle import CollectorMetrics
from lens.runtime import errors
from lens.runtime.clock import Clock

log = logging.getLogger(__name__)

NAME = "static_facts"


class StaticRefresh:
    """Reads vendors and static facts; never raises, remembers why the last refresh failed."""

    def __init__(
        self,
        *,
        vendors: VendorPresence,
        statics: StaticFactsSource,
        metrics: CollectorMetrics,
        clock: Clock,
    ) -> None:
        self._vendors = vendors
        self._statics = statics
        self._metrics = metrics
        self._clock = clock
        self._failing: str | None = None

    def __call__(self) -> None:
        started = self._clock.monotonic()
        try:
            found = self._vendors.refresh()
            inventory = self._statics.refresh()
        except errors.LensError as exc:
            # sysfs itself unreadable: the collectors will say so; the last facts are kept.
            self._failed(str(exc), started)
            return
        except Exception as exc:  # a bug in a parser: contained like a crashing collector
            if self._failing is None:
                log.error("static facts refresh crashed", exc_info=exc)
            self._failed(f"{type(exc).__name__}: {exc}", started)
            return
        self._succeeded(len(inventory.problems), started)
        log.debug(
            "static facts refreshed",
            extra={
                "vendors": sorted(found),
                "source": inventory.source,
                "gpus": len(inventory.facts),
            },
        )

    def check(self) -> None:
        """Readiness: SourceError saying why when the last refresh failed."""
        if self._failing is not None:
            raise errors.SourceError(f"static facts not refreshed: {self._failing}")

    def _succeeded(self, problems: int, started: float) -> None:
        self._metrics.duration.labels(NAME).observe(self._clock.monotonic() - started)
        self._metrics.success.labels(NAME).set(1)
        self._metrics.last_success.labels(NAME).set(self._clock.time())
        self._metrics.runs.labels(NAME, "success").inc()
        if problems:
            self._metrics.problems.labels(NAME).inc(problems)
        if self._failing is not None:
            log.info("static facts refreshed again")
            self._failing = None

    def _failed(self, reason: str, started: float) -> None:
        self._metrics.duration.labels(NAME).observe(self._clock.monotonic() - started)
        self._metrics.success.labels(NAME).set(0)
        self._metrics.runs.labels(NAME, "error").inc()
        if reason != self._failing:
            log.warning("static facts not refreshed", extra={"reason": reason})
        self._failing = reason
