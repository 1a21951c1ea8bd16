"""The tuning daemon's metrics: per parameter and place the desired and actual value and whether
they agree, the drift and conflicts counted, Lens's writes and when it last applied."""

from __future__ import annotations

import math
from collections.abc import Sequence

from lens.runtime.selfmetrics import SelfMetrics
from lens.tune import nofile, sysctl
from lens.tune.planning import ParameterState


class TuneMetrics:
    """The families, and the series of parameters no longer in the policy removed."""

    def __init__(self, metrics: SelfMetrics) -> None:
        labels = ("parameter", "place", "field")
        self.desired = metrics.gauge(
            "lens_tune_parameter_desired",
            "Value the tuning policy asks of a parameter in a place (one series per field).",
            labels,
        )
        self.actual = metrics.gauge(
            "lens_tune_parameter_actual",
            "Value a parameter has in a place (absent when unset; +Inf when unlimited).",
            labels,
        )
        self.in_sync = metrics.gauge(
            "lens_tune_parameter_in_sync",
            "Whether a parameter in a place meets the tuning policy (1) or not (0).",
            ("parameter", "place"),
        )
        self.drifted = metrics.gauge(
            "lens_tune_drifted_parameters",
            "Parameters and places that do not meet the tuning policy at the last check.",
        )
        self.conflicts = metrics.gauge(
            "lens_tune_conflicts",
            "Parameters a file read after Lens's drop-in sets against the policy.",
        )
        self.writes = metrics.counter(
            "lens_tune_writes_total",
            "Writes Lens made to the host: live sysctls and drop-in files.",
            ("kind",),
        )
        self.last_apply = metrics.gauge(
            "lens_tune_last_apply_timestamp_seconds",
            "Unix time in seconds when Lens last wrote anything to the host.",
        )
        self._shown: dict[str, set[tuple[str, ...]]] = {"desired": set(), "actual": set()}
        self._states: set[tuple[str, str]] = set()

    def show(self, states: Sequence[ParameterState], *, conflicts: int) -> None:
        """Set the per-parameter series to `states`, removing those no longer there (a
        parameter gone from the policy, an actual value now unset)."""
        shown: dict[str, set[tuple[str, ...]]] = {"desired": set(), "actual": set()}
        for state in states:
            self.in_sync.labels(state.name, state.place).set(1 if state.in_sync else 0)
            for which, gauge, text in (
                ("desired", self.desired, state.desired),
                ("actual", self.actual, state.actual),
            ):
                for index, value in enumerate(_numbers(text)):
                    key = (state.name, state.place, str(index))
                    gauge.labels(*key).set(value)
                    shown[which].add(key)
        for which, gauge in (("desired", self.desired), ("actual", self.actual)):
            for gone in self._shown[which] - shown[which]:
                gauge.remove(*gone)
        states_now = {(state.name, state.place) for state in states}
        for gone in self._states - states_now:
            self.in_sync.remove(*gone)
        self._shown = shown
        self._states = states_now
        self.drifted.set(sum(1 for state in states if not state.in_sync))
        self.conflicts.set(conflicts)

    def wrote(self, *, sysctls: int, files: int, at: float) -> None:
        if sysctls:
            self.writes.labels("sysctl").inc(sysctls)
        if files:
            self.writes.labels("file").inc(files)
        if sysctls or files:
            self.last_apply.set(at)


def _numbers(text: str) -> tuple[float, ...]:
    if text == "unlimited":
        return (math.inf,)
    fields = sysctl.parse_fields(text)
    if fields is None:
        return ()
    return tuple(math.inf if value == nofile.UNLIMITED else float(value) for value in fields)
