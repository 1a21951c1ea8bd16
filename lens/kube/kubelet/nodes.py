"""What Lens reads from Node objects: the kubelet's addresses and the GPU model labels (pure).

Any JSON is accepted: a field of the wrong type reads as absent, never as an exception.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

JsonObject = dict[str, Any]

ADDRESS_TYPES = ("InternalIP", "ExternalIP")


def _mapping(value: object) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _text(value: object) -> str:
    """A string field as is; "" for anything else (a list, a number, a missing one)."""
    return value if isinstance(value, str) else ""


def name_of(node: object) -> str:
    return _text(_mapping(_mapping(node).get("metadata")).get("name"))


def gpu_model(node: object, label_keys: Sequence[str]) -> str:
    """The first of `label_keys` the node carries (e.g. amd.com/gpu.product-name); "" if none."""
    labels = _mapping(_mapping(_mapping(node).get("metadata")).get("labels"))
    for key in label_keys:
        value = _text(labels.get(key))
        if value:
            return value
    return ""


def addresses(node: object) -> list[str]:
    """The node's internal and external IP addresses, each once, in the order listed."""
    found: list[str] = []
    for entry in _list(_mapping(_mapping(node).get("status")).get("addresses")):
        if _mapping(entry).get("type") not in ADDRESS_TYPES:
            continue
        text = _text(_mapping(entry).get("address"))
        try:
            ipaddress.ip_address(text)
        except ValueError:
            continue
        if text not in found:
            found.append(text)
    return found
