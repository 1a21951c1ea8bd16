"""The log collector of `lens demo`'s simulated cluster: what its training pods print
(lens/sim/scenario/trainlogs.py) posted to the jobs' `/v1/logs` as fluent-bit's http output
posts it (`format json`), so the lines reach training_performance through the real intake."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable

from lens.runtime.clock import Clock
from lens.sim.scenario.trainlogs import LogLine, TrainingLogs
from lens.sim.scenario.truth import Truth

log = logging.getLogger(__name__)

MAX_PENDING = 100_000  # lines kept while the intake refuses them (a real collector buffers too)
TIMEOUT_SECONDS = 10.0


def record(line: LogLine) -> dict[str, object]:
    """A line as fluent-bit's tail input, kubernetes filter and http output make it."""
    return {
        "date": line.at,
        "log": line.line,
        "stream": "stdout",
        "kubernetes": {
            "pod_name": line.pod_name,
            "namespace_name": line.namespace,
            "pod_id": line.pod_uid,
            "host": line.node,
            "container_name": "trainer",
        },
    }


class LogShipper:
    """A loop body: the lines printed since its last run, posted; kept to retry while the
    intake answers anything but 200."""

    def __init__(self, truth: Truth, *, clock: Clock, url: Callable[[], str]) -> None:
        """`url`: the intake's address, asked at each run (the port is known once serving)."""
        self._logs = TrainingLogs(truth)
        self._clock = clock
        self._url = url
        self._pending: list[LogLine] = []
        self.shipped = 0

    def ship(self) -> None:
        self._pending.extend(self._logs.due(self._clock.time()))
        del self._pending[:-MAX_PENDING]
        if not self._pending:
            return
        body = json.dumps([record(line) for line in self._pending]).encode()
        request = urllib.request.Request(
            self._url(), data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
                accepted = answer.status == 200
        except (urllib.error.URLError, OSError) as exc:
            log.debug("training logs not shipped", extra={"error": str(exc)})
            return
        if accepted:
            self.shipped += len(self._pending)
            self._pending.clear()
