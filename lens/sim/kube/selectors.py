"""Label and field selectors with the API server's grammar and errors.

Grammar from k8s.io/apimachinery pkg/labels/selector.go (equality, set-based, exists, gt/lt)
and pkg/fields/selector.go (=, ==, != with backslash escapes). store.py filters lists and
watches with them; a malformed selector is a ValueError, which the server answers with 400.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

Operator = Literal["=", "!=", "in", "notin", "exists", "!", "gt", "lt"]

_KEY_RE = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$")


@dataclasses.dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        if self.operator == "=":
            return present and value == self.values[0]
        if self.operator == "!=":
            return not present or value != self.values[0]
        if self.operator == "in":
            return present and value in self.values
        if self.operator == "notin":
            return not present or value not in self.values
        if not present or value is None:
            return False
        try:
            number = int(value)
        except ValueError:
            return False
        bound = int(self.values[0])
        return number > bound if self.operator == "gt" else number < bound


@dataclasses.dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        return all(r.matches(labels or {}) for r in self.requirements)


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _check_key(key: str) -> str:
    if not _KEY_RE.match(key):
        raise ValueError(f"invalid label key {key!r}")
    return key


def _check_value(value: str) -> str:
    if not _VALUE_RE.match(value):
        raise ValueError(f"invalid label value {value!r}")
    return value


_SET_RE = re.compile(r"^\s*(\S+)\s+(in|notin)\s*\((.*)\)\s*$")
_CMP_RE = re.compile(r"^\s*([^=!<>\s]+)\s*(==|=|!=|>|<)\s*(\S*)\s*$")


def _requirement(term: str) -> Requirement:
    stripped = term.strip()
    if not stripped:
        raise ValueError("found '', expected: identifier")
    set_match = _SET_RE.match(stripped)
    if set_match:
        key, op, body = set_match.groups()
        values = tuple(sorted(_check_value(v.strip()) for v in body.split(",") if v.strip()))
        if not values:
            raise ValueError(f"for '{op}' operator, values set can't be empty")
        return Requirement(_check_key(key), "in" if op == "in" else "notin", values)
    cmp_match = _CMP_RE.match(stripped)
    if cmp_match:
        key, op, value = cmp_match.groups()
        if op in (">", "<"):
            if not re.fullmatch(r"-?\d+", value):
                raise ValueError(
                    f"for 'gt', 'lt' operators, the value must be an integer: {value!r}"
                )
            return Requirement(_check_key(key), "gt" if op == ">" else "lt", (value,))
        return Requirement(_check_key(key), "!=" if op == "!=" else "=", (_check_value(value),))
    if stripped.startswith("!"):
        return Requirement(_check_key(stripped[1:].strip()), "!")
    return Requirement(_check_key(stripped), "exists")


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse `labelSelector`; an empty selector matches everything."""
    if not text or not text.strip():
        return LabelSelector()
    return LabelSelector(tuple(_requirement(term) for term in _split_top_level(text)))


# Field selectors each kind supports besides metadata.name and metadata.namespace
# (the API server's field label conversion functions, pkg/registry/*/strategy.go).
_FIELDS: dict[str, dict[str, Callable[[dict[str, Any]], str]]] = {
    "Pod": {
        "spec.nodeName": lambda o: o.get("spec", {}).get("nodeName", ""),
        "spec.restartPolicy": lambda o: o.get("spec", {}).get("restartPolicy", ""),
        "spec.schedulerName": lambda o: o.get("spec", {}).get("schedulerName", ""),
        "spec.serviceAccountName": lambda o: o.get("spec", {}).get("serviceAccountName", ""),
        "spec.hostNetwork": lambda o: str(
            bool(o.get("spec", {}).get("hostNetwork", False))
        ).lower(),
        "status.phase": lambda o: o.get("status", {}).get("phase", ""),
        "status.podIP": lambda o: o.get("status", {}).get("podIP", ""),
        "status.nominatedNodeName": lambda o: o.get("status", {}).get("nominatedNodeName", ""),
    },
    "Node": {
        "spec.unschedulable": lambda o: str(
            bool(o.get("spec", {}).get("unschedulable", False))
        ).lower()
    },
    "Namespace": {"status.phase": lambda o: o.get("status", {}).get("phase", "")},
    "Secret": {"type": lambda o: o.get("type", "")},
    "Event": {
        "involvedObject.kind": lambda o: o.get("involvedObject", {}).get("kind", ""),
        "involvedObject.name": lambda o: o.get("involvedObject", {}).get("name", ""),
        "involvedObject.namespace": lambda o: o.get("involvedObject", {}).get("namespace", ""),
        "involvedObject.uid": lambda o: o.get("involvedObject", {}).get("uid", ""),
        "reason": lambda o: o.get("reason", ""),
        "type": lambda o: o.get("type", ""),
    },
}

_COMMON_FIELDS: dict[str, Callable[[dict[str, Any]], str]] = {
    "metadata.name": lambda o: o.get("metadata", {}).get("name", ""),
    "metadata.namespace": lambda o: o.get("metadata", {}).get("namespace", ""),
}


@dataclasses.dataclass(frozen=True, slots=True)
class FieldTerm:
    field: str
    equal: bool
    value: str
    read: Callable[[dict[str, Any]], str]


@dataclasses.dataclass(frozen=True, slots=True)
class FieldSelector:
    terms: tuple[FieldTerm, ...] = ()

    def matches(self, obj: dict[str, Any]) -> bool:
        return all((term.read(obj) == term.value) == term.equal for term in self.terms)


def parse_field_selector(text: str | None, kind: str) -> FieldSelector:
    """Parse `fieldSelector` for `kind`; unknown fields are refused as the API server does."""
    if not text or not text.strip():
        return FieldSelector()
    supported = {**_COMMON_FIELDS, **_FIELDS.get(kind, {})}
    terms = []
    for term in _split_raw(text):
        for op in ("!=", "==", "="):
            if op in term:
                field, _, value = term.partition(op)
                break
        else:
            raise ValueError(f"invalid selector: '{text}'; can't understand '{term}'")
        field = field.strip()
        read = supported.get(field)
        if read is None:
            raise ValueError(f"field label not supported: {field}")
        terms.append(FieldTerm(field, op != "!=", _unescape(value.strip()), read))
    return FieldSelector(tuple(terms))


def _split_raw(text: str) -> list[str]:
    """Split on commas that are not escaped, keeping escapes for the values."""
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.extend(("\\", char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


def _unescape(value: str) -> str:
    out: list[str] = []
    escaped = False
    for char in value:
        if escaped or char != "\\":
            out.append(char)
            escaped = False
        else:
            escaped = True
    return "".join(out)
