"""Liveness (/healthz) and readiness (/readyz) of a role.

Liveness probes are cheap in-memory checks evaluated per request (a stalled loop, a wedged event
loop). Readiness checks reach the role's real dependencies (the database, the API server), so
they run on the role's readiness loop and /readyz answers from their last results; a result
older than `stale_after` seconds counts as a failure.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable

from lens.runtime.clock import Clock
from lens.runtime.selfmetrics import SelfMetrics

log = logging.getLogger(__name__)

LivenessProbe = Callable[[], "str | None"]
"""Returns a problem, or None when alive."""

ReadinessCheck = Callable[[], None]
"""Raises when the dependency is not usable; the exception text is the detail."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    checked_at: float | None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    ok: bool
    checks: tuple[CheckResult, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "status": "ok" if self.ok else "failing",
            "checks": {
                c.name: {"ok": c.ok, "detail": c.detail, "checked_at": c.checked_at}
                for c in self.checks
            },
        }


class Health:
    """The probes and checks of one role, and their last results."""

    def __init__(self, *, clock: Clock, metrics: SelfMetrics, stale_after: float) -> None:
        self._clock = clock
        self._stale_after = stale_after
        self._probes: dict[str, LivenessProbe] = {}
        self._checks: dict[str, ReadinessCheck] = {}
        self._results: dict[str, CheckResult] = {}
        self._lock = threading.Lock()
        self._gauge = metrics.gauge(
            "lens_readiness_check_success",
            "Whether the last run of a readiness check passed (1) or failed (0).",
            ("check",),
        )

    def add_liveness(self, name: str, probe: LivenessProbe) -> None:
        """Add probe `name`; a name is given once per process, whichever role gives it."""
        if name in self._probes:
            raise ValueError(f"liveness probe {name!r} is added twice")
        self._probes[name] = probe

    def add_readiness(self, name: str, check: ReadinessCheck) -> None:
        """Add check `name`, shown under that name by /readyz; a name is given once."""
        if name in self._checks:
            raise ValueError(f"readiness check {name!r} is added twice")
        self._checks[name] = check

    def evaluate_readiness(self) -> None:
        """Run every readiness check once and keep the results (the readiness loop's body)."""
        for name, check in list(self._checks.items()):
            try:
                check()
            except Exception as exc:  # any failure of a dependency means not ready
                result = CheckResult(
                    name=name, ok=False, detail=_detail(exc), checked_at=self._clock.time()
                )
            else:
                result = CheckResult(name=name, ok=True, detail="", checked_at=self._clock.time())
            self._record(result)

    def _record(self, result: CheckResult) -> None:
        with self._lock:
            previous = self._results.get(result.name)
            self._results[result.name] = result
        self._gauge.labels(result.name).set(1 if result.ok else 0)
        if previous is None or previous.ok != result.ok:
            log.log(
                logging.INFO if result.ok else logging.WARNING,
                "readiness check changed",
                extra={"check": result.name, "ok": result.ok, "detail": result.detail},
            )

    def liveness(self) -> Verdict:
        results = []
        for name, probe in self._probes.items():
            problem = probe()
            results.append(
                CheckResult(name=name, ok=problem is None, detail=problem or "", checked_at=None)
            )
        return Verdict(ok=all(r.ok for r in results), checks=tuple(results))

    def readiness(self) -> Verdict:
        now = self._clock.time()
        with self._lock:
            results = dict(self._results)
        verdicts = []
        for name in self._checks:
            result = results.get(name)
            if result is None:
                result = CheckResult(name=name, ok=False, detail="not checked yet", checked_at=None)
            elif result.checked_at is not None and now - result.checked_at > self._stale_after:
                result = dataclasses.replace(
                    result, ok=False, detail=f"last checked {now - result.checked_at:.0f} s ago"
                )
            verdicts.append(result)
        return Verdict(ok=all(r.ok for r in verdicts), checks=tuple(verdicts))


def _detail(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:300]
