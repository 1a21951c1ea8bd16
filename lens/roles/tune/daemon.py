"""One cycle of the tuning daemon: the node compared with the policy, what drifted put back
(Lens's drop-ins and live sysctls, through lens/tune's plan), metrics set, and a log line only
when something changed. Cycles come from the periodic check and from file changes; a lock keeps
them one at a time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from lens.roles.tune.tunemetrics import TuneMetrics
from lens.runtime import errors
from lens.runtime.clock import Clock
from lens.tune import applying, changes, planning, policyfile

log = logging.getLogger(__name__)


class TuneDaemon:
    """Keeps the host under `root` to the policy; `cycle()` is safe from any thread."""

    def __init__(
        self,
        *,
        root: Path,
        record_file: Path,
        policy: policyfile.PolicyFile,
        labels: Callable[[], Mapping[str, str]],
        repair: bool,
        metrics: TuneMetrics,
        clock: Clock,
    ) -> None:
        self._root = root
        self._record_file = record_file
        self._policy = policy
        self._labels = labels
        self._repair = repair
        self._metrics = metrics
        self._clock = clock
        self._lock = threading.Lock()
        self._checked = False
        self._error: str | None = None
        self._drifted: frozenset[tuple[str, str]] = frozenset()
        self._conflicts: tuple[changes.Conflict, ...] = ()
        self._policy_error: str | None = None

    def cycle(self) -> None:
        """Check, repair when asked to, report; a bad host file or policy is reported (logs,
        readiness), never raised."""
        with self._lock:
            try:
                self._cycle()
            except (errors.ConfigError, errors.SourceError) as exc:
                if str(exc) != self._error:
                    log.error("tuning check failed", extra={"error": str(exc)})
                self._error = str(exc)
            else:
                if self._error is not None:
                    log.info("tuning check works again")
                self._error = None
            self._checked = True

    def ready(self) -> None:
        """The readiness check: raises while the last cycle failed or the policy file is bad."""
        if not self._checked:
            raise RuntimeError("the node has not been checked yet")
        if self._error is not None:
            raise RuntimeError(self._error)
        if self._policy.error is not None:
            raise RuntimeError(f"{self._policy.error} (the last good policy stays in force)")

    def _cycle(self) -> None:
        policy = self._policy.current()
        self._note_policy_error()
        labels = self._labels()
        source = policyfile.source_name(self._policy.path)
        planned = changes.plan(policy, root=self._root, labels=labels, source=source)
        if self._repair and not planned.empty:
            done = applying.apply(planned, root=self._root, record_file=self._record_file)
            self._metrics.wrote(sysctls=done.sysctls, files=done.files, at=self._clock.time())
            log.info(
                "node tuning repaired",
                extra={
                    "sysctls": [f"{w.key}: {w.before} -> {w.after}" for w in planned.live],
                    "files": [str(w.path) for w in planned.files],
                },
            )
        states = planning.check(policy, root=self._root, labels=labels, source=source)
        self._metrics.show(states, conflicts=len(planned.conflicts))
        self._note_changes(states, planned.conflicts)

    def _note_policy_error(self) -> None:
        error = self._policy.error
        if error != self._policy_error and error is not None:
            log.error("tuning policy not reloaded; the last good one stays", extra={"error": error})
        elif error != self._policy_error:
            log.info("tuning policy reloaded", extra={"path": self._policy.path})
        self._policy_error = error

    def _note_changes(
        self, states: Sequence[planning.ParameterState], conflicts: tuple[changes.Conflict, ...]
    ) -> None:
        drifted = frozenset((s.name, s.place) for s in states if not s.in_sync)
        if drifted != self._drifted:
            if drifted:
                log.warning(
                    "node out of the tuning policy",
                    extra={"drifted": sorted(f"{name} ({place})" for name, place in drifted)},
                )
            else:
                log.info("node in sync with the tuning policy")
        if conflicts != self._conflicts and conflicts:
            log.warning(
                "files read after Lens's drop-ins set values against the policy",
                extra={"conflicts": [f"{c.parameter} ({c.place}): {c.detail}" for c in conflicts]},
            )
        self._drifted = drifted
        self._conflicts = conflicts
