"""One cycle of the tuning daemon: the node compared with the policy, what drifted put back
(Lens's drop-ins and live sysctls, through lens/tune's plan), metrics set, and a log line only
when something changed. Cycles come from the periodic check and from file changes; a lock keeps
them one at a time.
"""

from __future__ import annotations

import dataclasses
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
        # Live writes the kernel refused, by key: (the value then, the value refused). Not tried
        # again until either changes, so a refused value is no write storm.
        self._refused: dict[str, tuple[str, str, str]] = {}

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
        if self._refused:
            raise RuntimeError("; ".join(why for _, _, why in self._refused.values()))

    def _cycle(self) -> None:
        policy = self._policy.current()
        self._note_policy_error()
        labels = self._labels()
        source = policyfile.source_name(self._policy.path)
        planned = self._without_refused(
            changes.plan(policy, root=self._root, labels=labels, source=source)
        )
        failed: applying.PartlyApplied | None = None
        if self._repair and not planned.empty:
            try:
                done = applying.apply(planned, root=self._root, record_file=self._record_file)
            except applying.PartlyApplied as exc:
                done, failed = exc.applied, exc
                self._refuse(planned, exc)
            self._metrics.wrote(sysctls=done.sysctls, files=done.files, at=self._clock.time())
            log.info(
                "node tuning repaired",
                extra={
                    "sysctls": [f"{w.key}: {w.before} -> {w.after}" for w in planned.live],
                    "files": [str(w.path) for w in planned.files],
                },
            )
        # Published whatever the writes did: drift the daemon cannot repair must show.
        states = planning.check(policy, root=self._root, labels=labels, source=source)
        self._metrics.show(states, conflicts=len(planned.conflicts))
        self._note_changes(states, planned.conflicts)
        if failed is not None:
            raise failed

    def _without_refused(self, planned: changes.Plan) -> changes.Plan:
        """The plan less the live writes refused before, unless the value now or the one wanted
        changed (then they are tried again)."""
        wanted = {w.key: w for w in planned.live}
        for key in list(self._refused):
            before, after, _ = self._refused[key]
            write = wanted.get(key)
            if write is None or (write.before, write.after) != (before, after):
                del self._refused[key]
        live = tuple(w for w in planned.live if w.key not in self._refused)
        return dataclasses.replace(planned, live=live)

    def _refuse(self, planned: changes.Plan, exc: applying.PartlyApplied) -> None:
        for write in planned.live:
            if write.key in exc.sysctls:
                why = next((part for part in str(exc).split("; ") if write.key in part), str(exc))
                self._refused[write.key] = (write.before, write.after, why)

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
