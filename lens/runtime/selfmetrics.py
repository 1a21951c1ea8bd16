"""Lens's own instruments (loops, HTTP, readiness, process) on a private registry (STYLE S6.8).

Parts of a role create their counters and gauges here; runtime/exposition.py renders the registry
once per cycle together with the snapshot families.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector

from lens.runtime.quantiles import SlidingQuantiles

_NAME_RE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")

DURATION_BUCKETS = (
    0.001,
    0.005,
    0.01,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
    300.0,
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FamilyDoc:
    """What docs/metrics.md says of one family."""

    name: str
    type: str
    labels: tuple[str, ...]
    help: str
    stability: str = "alpha"


def check_family(name: str, help: str, kind: str, labels: Sequence[str]) -> None:
    """Raise ValueError unless the family follows Prometheus naming (STYLE S7)."""
    if not _NAME_RE.match(name):
        raise ValueError(f"{name}: not a valid metric name")
    if kind == "counter" and not name.endswith("_total"):
        raise ValueError(f"{name}: a counter's name ends in _total")
    if kind != "counter" and name.endswith("_total"):
        raise ValueError(f"{name}: only counters end in _total")
    if kind == "info" and not name.endswith("_info"):
        raise ValueError(f"{name}: an info family's name ends in _info")
    if not help.endswith("."):
        raise ValueError(f"{name}: help is one sentence ending with a period")
    for label in labels:
        if not _LABEL_RE.match(label) or label.startswith("__"):
            raise ValueError(f"{name}: {label!r} is not a valid label name")


class SelfMetrics:
    """A private registry and the factory of the instruments registered on it."""

    def __init__(self, *, process: bool = True) -> None:
        # The `_created` series would double every counter and histogram in the text format
        # while telling Prometheus nothing it does not infer from resets. The switch is
        # process-wide in prometheus_client; every Lens process wants it off.
        prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]  # no annotations upstream
        self.registry = CollectorRegistry(auto_describe=True)
        self._declared: list[FamilyDoc] = []
        self._owners: dict[str, str] = {}
        if process:
            ProcessCollector(registry=self.registry)

    @property
    def declared(self) -> tuple[FamilyDoc, ...]:
        """Every instrument created here, for docs/metrics.md."""
        return tuple(self._declared)

    def reserve(self, names: Sequence[str], *, by: str) -> None:
        """Claim family names rendered elsewhere in this process (a collection cycle's text),
        so that no instrument, and no other role, declares them again."""
        for name in names:
            self._claim(name, by)

    def _claim(self, name: str, by: str) -> None:
        owner = self._owners.get(name)
        if owner is not None:
            raise ValueError(f"{name}: metric family declared twice (by {owner} and {by})")
        self._owners[name] = by

    def _declare(self, name: str, kind: str, help: str, labels: Sequence[str]) -> None:
        check_family(name, help, kind, labels)
        self._claim(name, "an instrument")
        self._declared.append(FamilyDoc(name=name, type=kind, labels=tuple(labels), help=help))

    def counter(self, name: str, help: str, labels: Sequence[str] = ()) -> Counter:
        self._declare(name, "counter", help, labels)
        return Counter(name, help, labelnames=tuple(labels), registry=self.registry)

    def gauge(self, name: str, help: str, labels: Sequence[str] = ()) -> Gauge:
        self._declare(name, "gauge", help, labels)
        return Gauge(name, help, labelnames=tuple(labels), registry=self.registry)

    def histogram(
        self,
        name: str,
        help: str,
        labels: Sequence[str] = (),
        *,
        buckets: Sequence[float] = DURATION_BUCKETS,
    ) -> Histogram:
        self._declare(name, "histogram", help, labels)
        return Histogram(
            name, help, labelnames=tuple(labels), registry=self.registry, buckets=tuple(buckets)
        )

    def summary(
        self,
        name: str,
        help: str,
        labels: Sequence[str] = (),
        *,
        objectives: Sequence[float] = (0.5, 0.9, 0.95, 0.99),
        max_age_seconds: float = 600.0,
    ) -> SlidingQuantiles:
        """A summary with quantiles over the last `max_age_seconds` (runtime/quantiles.py)."""
        self._declare(name, "summary", help, labels)
        quantiles = SlidingQuantiles(
            name, help, labels, objectives=objectives, max_age_seconds=max_age_seconds
        )
        self.registry.register(quantiles)
        return quantiles
