"""What Lens reads from Node objects: the kubelet's addresses and the GPU model labels (pure)."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

JsonObject = dict[str, Any]

ADDRESS_TYPES = ("InternalIP", "ExternalIP")


def name_of(node: JsonObject) -> str:
    return str((node.get("metadata") or {}).get("name") or "")


def gpu_model(node: JsonObject, label_keys: Sequence[str]) -> str:
    """The first of `label_keys` the node carries (e.g. amd.com/gpu.product-name); "" if none."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    for key in label_keys:
        value = labels.get(key)
        if value:
            return str(value)
    return ""


def addresses(node: JsonObject) -> list[str]:
    """The node's internal and external IP addresses, each once, in the order listed."""
    found: list[str] = []
    for entry in (node.get("status") or {}).get("addresses") or []:
        if entry.get("type") not in ADDRESS_TYPES:
            continue
        text = str(entry.get("address") or "")
        try:
            ipaddress.ip_address(text)
        except ValueError:
            continue
        if text not in found:
            found.append(text)
    return found
