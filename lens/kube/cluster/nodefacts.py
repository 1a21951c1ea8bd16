"""What a Node object says about a GPU node, for the `nodes` table and the allocation (pure).

Any JSON is accepted: a field of the wrong type reads as absent, never as an exception.
"""

from __future__ import annotations

import dataclasses
import decimal
import re
from collections.abc import Sequence
from typing import Any

from lens.kube.kubelet import allocation, nodes
from lens.runtime import errors

JsonObject = dict[str, Any]

READY, NOT_READY, UNKNOWN = "Ready", "NotReady", "Unknown"

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL_EXPONENTS = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY = re.compile(
    r"([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d{1,3})|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?"
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeFacts:
    name: str
    address: str  # the first internal or external IP ("" when none)
    gpu_model: str  # from the GPU model labels ("" when none)
    gpu_capacity: int  # status.capacity of the GPU resources
    status: str  # Ready, NotReady or Unknown (the Ready condition)
    cpu_model: str  # from the configured label ("" when unknown)
    cpu_count: int
    memory: str  # capacity memory as the node states it (the original's column)
    memory_bytes: int | None  # None: absent or not a quantity
    os: str
    kernel_version: str
    kubelet_version: str  # also the node's Kubernetes version
    container_runtime: str
    taints: tuple[Taint, ...]

    @property
    def is_gpu_node(self) -> bool:
        return self.gpu_capacity > 0 or bool(self.gpu_model)


def _mapping(value: object) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def parse_quantity_bytes(text: str) -> int:
    """A Kubernetes quantity ("2113459300Ki", "512Gi", "1e9", "128974848") in whole units."""
    match = _QUANTITY.fullmatch(text.strip())
    if match is None:
        raise errors.SourceError(f"node: bad quantity {text[:40]!r}")
    number, exponent, suffix = match.groups()
    value = decimal.Decimal(number + (exponent or ""))
    if suffix:
        binary = _BINARY.get(suffix)
        value *= binary if binary else decimal.Decimal(10) ** _DECIMAL_EXPONENTS[suffix]
    if abs(value) > allocation.QUANTITY_MOST:
        raise errors.SourceError(f"node: quantity {text[:40]!r} out of range")
    return int(value)


def _quantity_or_none(value: object) -> int | None:
    if not isinstance(value, str | int) or isinstance(value, bool):
        return None
    try:
        return parse_quantity_bytes(str(value))
    except errors.SourceError:
        return None


def ready_status(node: object) -> str:
    for condition in _list(_mapping(_mapping(node).get("status")).get("conditions")):
        entry = _mapping(condition)
        if entry.get("type") == "Ready":
            return {"True": READY, "False": NOT_READY}.get(_text(entry.get("status")), UNKNOWN)
    return UNKNOWN


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _taints(node: object) -> tuple[Taint, ...]:
    found = []
    for entry in _list(_mapping(_mapping(node).get("spec")).get("taints")):
        taint = _mapping(entry)
        if _text(taint.get("key")):
            found.append(
                Taint(
                    key=_text(taint.get("key")),
                    value=_text(taint.get("value")),
                    effect=_text(taint.get("effect")),
                )
            )
    return tuple(found)


def gpu_capacity(node: object, resources: Sequence[str]) -> int:
    capacity = _mapping(_mapping(_mapping(node).get("status")).get("capacity"))
    return sum(max(0, _quantity_or_none(capacity.get(r)) or 0) for r in resources)


def facts(
    node: object,
    *,
    gpu_resources: Sequence[str],
    gpu_model_labels: Sequence[str],
    cpu_model_label: str = "",
) -> NodeFacts:
    status = _mapping(_mapping(node).get("status"))
    capacity = _mapping(status.get("capacity"))
    info = _mapping(status.get("nodeInfo"))
    labels = _mapping(_mapping(_mapping(node).get("metadata")).get("labels"))
    found = nodes.addresses(node)
    return NodeFacts(
        name=nodes.name_of(node),
        address=found[0] if found else "",
        gpu_model=nodes.gpu_model(node, gpu_model_labels),
        gpu_capacity=gpu_capacity(node, gpu_resources),
        status=ready_status(node),
        cpu_model=_text(labels.get(cpu_model_label)) if cpu_model_label else "",
        cpu_count=max(0, _quantity_or_none(capacity.get("cpu")) or 0),
        memory=_text(capacity.get("memory")),
        memory_bytes=_quantity_or_none(capacity.get("memory")),
        os=_text(info.get("osImage")),
        kernel_version=_text(info.get("kernelVersion")),
        kubelet_version=_text(info.get("kubeletVersion")),
        container_runtime=_text(info.get("containerRuntimeVersion")),
        taints=_taints(node),
    )
