"""Reading Lens's Grafana dashboards as the tests need them: every PromQL expression of every
panel and template variable, with Grafana's variables replaced as Grafana would replace them;
the metric names an expression reads; and the families docs/metrics.md lists.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DASHBOARDS = ROOT / "deploy" / "grafana" / "dashboards"
METRICS_DOC = ROOT / "docs" / "metrics.md"

# Grafana's global variables, as it would set them for a short time range scraped every second.
BUILTINS = {
    "__rate_interval": "10s",
    "__interval_ms": "2000",
    "__interval": "2s",
    "__range_s": "300",
    "__range": "5m",
}
_VARIABLE = re.compile(r"\$\{(\w+)(?::[^}]*)?\}|\$(\w+)")
_LABEL_VALUES = re.compile(r"^label_values\((?P<selector>.+),\s*(?P<label>\w+)\s*\)$", re.S)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    """One PromQL expression of a dashboard, as written (Grafana variables unreplaced)."""

    dashboard: str  # uid
    where: str  # "panel 3 'Use per GPU' A" or "variable node"
    expr: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Variable:
    """A query variable: `label_values(selector, label)`."""

    name: str
    selector: str
    label: str
    all_value: str | None  # what "All" stands for; None when All is not offered


@dataclasses.dataclass(frozen=True, slots=True)
class Dashboard:
    path: Path
    model: dict[str, Any]

    @property
    def uid(self) -> str:
        return str(self.model["uid"])

    def panels(self) -> Iterator[dict[str, Any]]:
        """Every panel, those inside collapsed rows too."""
        for panel in self.model.get("panels", []):
            yield panel
            yield from panel.get("panels", [])

    def variables(self) -> list[Variable]:
        found = []
        for var in self.model["templating"]["list"]:
            if var["type"] != "query":
                continue
            query = var["query"]
            text = query if isinstance(query, str) else query["query"]
            match = _LABEL_VALUES.match(text.strip())
            if match is None:
                raise ValueError(f"{self.uid}: variable {var['name']}: {text!r}")
            all_value = var.get("allValue") if var.get("includeAll") else None
            found.append(
                Variable(
                    name=var["name"],
                    selector=match["selector"].strip(),
                    label=match["label"],
                    all_value=all_value,
                )
            )
        return found

    def panel_queries(self) -> list[Query]:
        return [
            Query(
                dashboard=self.uid,
                where=f"panel {panel['id']} {panel['title']!r} {target['refId']}",
                expr=target["expr"],
            )
            for panel in self.panels()
            for target in panel.get("targets", [])
        ]

    def queries(self) -> list[Query]:
        """Every expression: the panels' and the variables' selectors."""
        selectors = [
            Query(dashboard=self.uid, where=f"variable {v.name}", expr=v.selector)
            for v in self.variables()
        ]
        return self.panel_queries() + selectors


def dashboards() -> list[Dashboard]:
    return [
        Dashboard(path, json.loads(path.read_text())) for path in sorted(DASHBOARDS.glob("*.json"))
    ]


def expand(expr: str, values: Mapping[str, str]) -> str:
    """`expr` with Grafana's variables replaced (`$name`, `${name}`, `${name:format}`); a
    variable neither in `values` nor one of Grafana's globals is an error."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name in values:
            return values[name]
        if name in BUILTINS:
            return BUILTINS[name]
        raise KeyError(f"unknown variable ${name} in {expr!r}")

    return _VARIABLE.sub(value, expr)


# --- metric names -------------------------------------------------------------------------------

_KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2", "start", "end"}
_GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
_IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?[a-zA-Z]*")
_CLOSING = {"{": "}", "[": "]", "(": ")"}
_CALLED = re.compile(r"\(|(?:by|without)\s*\(")


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: identifiers that are neither functions,
    aggregations, keywords nor grouping labels, outside strings, matchers and ranges."""
    names: set[str] = set()
    i = 0
    while i < len(expr):
        ch = expr[i]
        if ch in "\"'`":
            i = _after_string(expr, i)
        elif ch in "{[":
            i = _after_group(expr, i)
        elif ch.isdigit() or (ch == "." and expr[i + 1 : i + 2].isdigit()):
            number = _NUMBER.match(expr, i)
            i = number.end() if number else i + 1
        elif identifier := _IDENTIFIER.match(expr, i):
            word = identifier.group()
            i = identifier.end()
            following = expr[i:].lstrip()
            if word in _GROUPING and following.startswith("("):
                i = _after_group(expr, expr.index("(", i))  # label names, not metrics
            elif not _CALLED.match(following) and word not in _KEYWORDS:
                names.add(word)  # neither a function nor `sum by (...) (...)`
        else:
            i += 1
    return names


def _after_string(expr: str, start: int) -> int:
    quote = expr[start]
    i = start + 1
    while i < len(expr) and expr[i] != quote:
        i += 2 if expr[i] == "\\" and quote != "`" else 1
    if i >= len(expr):
        raise ValueError(f"unterminated string in {expr!r}")
    return i + 1


def _after_group(expr: str, start: int) -> int:
    """The index after the bracket closing the one at `start` (strings inside skipped)."""
    closing = _CLOSING[expr[start]]
    i = start + 1
    while i < len(expr) and expr[i] != closing:
        if expr[i] in "\"'`":
            i = _after_string(expr, i)
        elif expr[i] in _CLOSING:
            i = _after_group(expr, i)
        else:
            i += 1
    if i >= len(expr):
        raise ValueError(f"unbalanced {expr[start]} in {expr!r}")
    return i + 1


@dataclasses.dataclass(frozen=True, slots=True)
class Documented:
    """The families docs/metrics.md lists, by name, with their types."""

    families: dict[str, str]

    def has(self, name: str) -> bool:
        """Whether `name` is a series of a listed family: the family itself, a histogram's or
        summary's _bucket/_sum/_count, one of the `rdma_stat_<counter>` gauges, or one of the
        standard process_* families the page says every process exports."""
        if name in self.families:
            return True
        for suffix, kinds in (("_bucket", {"histogram"}), ("_sum", {"histogram", "summary"})):
            if name.endswith(suffix) and self.families.get(name[: -len(suffix)]) in kinds:
                return True
        if name.endswith("_count"):
            return self.families.get(name[: -len("_count")]) in {"histogram", "summary"}
        if name.startswith("rdma_stat_"):
            return "rdma_stat_<counter>" in self.families
        return name.startswith("process_") and "`process_*`" in METRICS_DOC.read_text()


def documented() -> Documented:
    rows = re.findall(r"^\| `([^`]+)` \| (\w+) \|", METRICS_DOC.read_text(), re.M)
    return Documented(dict(rows))
