"""A fast writer of the Prometheus text format (0.0.4) for snapshot families and registries.

prometheus_client's generate_latest validates and escapes every label name of every sample;
a node agent rendering ~700 samples a second spent most of its CPU there. Names are validated
once at declaration (families.check_groups, SelfMetrics), so this writer only escapes label
values and caches each label set's text between renders. Output is what generate_latest writes
(labels in declaration order instead of sorted, which the format allows). SnapshotFamilies keeps
the latest snapshots of one type as a text source of runtime/exposition.py's publisher.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Generic, TypeVar

from prometheus_client.core import Metric

from lens.runtime.families import FamilyGroup

S = TypeVar("S")

GroupSnapshots = tuple[FamilyGroup[Any], Sequence[Any]]
"""A family group and the snapshots to render through it."""

_TYPES = {
    "counter": "counter",
    "gauge": "gauge",
    "info": "gauge",
    "histogram": "histogram",
    "summary": "summary",
}
_SKIPPED_SUFFIXES = ("_created", "_gsum", "_gcount")


def escape_label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def format_value(value: float) -> str:
    """A sample value as prometheus_client writes it (Go's float formatting for big numbers)."""
    number = float(value)
    if number != number:
        return "NaN"
    if math.isinf(number):
        return "+Inf" if number > 0 else "-Inf"
    text = repr(number)
    dot = text.find(".")
    if number > 0 and dot > 6:
        # Go writes 1.8e+09 where Python writes 1800000000.0.
        mantissa = f"{text[0]}.{text[1:dot]}{text[dot + 1 :]}".rstrip("0.")
        return f"{mantissa}e+{dot - 1:02d}"
    return text


def _header(name: str, help: str, kind: str) -> str:
    escaped = help.replace("\\", "\\\\").replace("\n", "\\n")
    return f"# HELP {name} {escaped}\n# TYPE {name} {kind}\n"


class TextRenderer:
    """Renders families to text, remembering label sets seen in the previous render."""

    def __init__(self) -> None:
        self._labels: dict[tuple[tuple[str, ...], tuple[str, ...]], str] = {}
        self._next: dict[tuple[tuple[str, ...], tuple[str, ...]], str] = {}

    def _label_text(self, names: tuple[str, ...], values: tuple[str, ...]) -> str:
        key = (names, values)
        text = self._next.get(key)
        if text is None:
            text = self._labels.get(key)
            if text is None:
                pairs = ",".join(
                    f'{n}="{escape_label_value(v)}"' for n, v in zip(names, values, strict=True)
                )
                text = "{" + pairs + "}" if pairs else ""
            self._next[key] = text
        return text

    def _finish(self) -> None:
        # Only label sets used by this render are kept: a removed device's go with it.
        self._labels, self._next = self._next, {}

    def render_groups(self, parts: Iterable[GroupSnapshots], *, opt_in: frozenset[str]) -> str:
        """Snapshot families; groups given several times (two collectors) render once: those
        sharing their specs (families.labelled's) through the first one's identity."""
        merged: dict[int, tuple[FamilyGroup[Any], list[Any]]] = {}
        for group, snapshots in parts:
            merged.setdefault(id(group.specs), (group, []))[1].extend(snapshots)
        out: list[str] = []
        for group, snapshots in merged.values():
            self._render_group(out, group, snapshots, opt_in)
        self._finish()
        return "".join(out)

    def _render_group(
        self, out: list[str], group: FamilyGroup[Any], snapshots: list[Any], opt_in: frozenset[str]
    ) -> None:
        identities = [group.identity(snapshot) for snapshot in snapshots]
        for spec in group.specs:
            if spec.opt_in and spec.name not in opt_in:
                continue
            names = group.identity_labels + spec.labels
            lines = []
            for snapshot, identity in zip(snapshots, identities, strict=True):
                for values, value in spec.samples(snapshot):
                    if value is not None:
                        labels = self._label_text(names, identity + values)
                        lines.append(f"{spec.name}{labels} {format_value(value)}\n")
            if lines:
                out.append(_header(spec.name, spec.help, _TYPES[spec.type]))
                out.extend(lines)

    def render_metrics(self, metrics: Iterable[Metric]) -> str:
        """prometheus_client families (a registry's collect()), as generate_latest writes them."""
        out: list[str] = []
        for metric in metrics:
            name, kind = metric.name, metric.type
            if kind == "counter":
                name += "_total"
            elif kind == "info":
                name += "_info"
            out.append(_header(name, metric.documentation, _TYPES.get(kind, "untyped")))
            for sample in metric.samples:
                if sample.name.endswith(_SKIPPED_SUFFIXES) and sample.name != name:
                    continue
                keys = tuple(sample.labels)
                labels = self._label_text(keys, tuple(sample.labels[k] for k in keys))
                out.append(f"{sample.name}{labels} {format_value(sample.value)}\n")
        self._finish()
        return "".join(out)


class SnapshotFamilies(Generic[S]):
    """The latest snapshots of one type, written through its FamilyGroup by render_text()."""

    def __init__(self, group: FamilyGroup[S], *, opt_in: frozenset[str] = frozenset()) -> None:
        self._group = group
        self._opt_in = opt_in
        self._snapshots: tuple[S, ...] = ()
        self._lock = threading.Lock()
        self._renderer = TextRenderer()

    def update(self, snapshots: Iterable[S]) -> None:
        """Replace the snapshots; devices missing now are gone from the next render."""
        fresh = tuple(snapshots)
        with self._lock:
            self._snapshots = fresh

    def render_text(self) -> str:
        with self._lock:
            return self._renderer.render_groups(
                [(self._group, self._snapshots)], opt_in=self._opt_in
            )
