"""Parse what a container was given from its OCI runtime spec and its CRI labels.

containerd.py hands over the spec (JSON bytes) and labels of each container; attribution.py
turns the device numbers found here into GPUs and RDMA devices. Formats:
shared/formats/containerd.md sections 3 and 4.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TypeGuard

from lens.containers.model import Pod
from lens.runtime import errors, jsontext

POD_NAME = "io.kubernetes.pod.name"
POD_NAMESPACE = "io.kubernetes.pod.namespace"
POD_UID = "io.kubernetes.pod.uid"
CONTAINER_NAME = "io.kubernetes.container.name"
KIND = "io.cri-containerd.kind"
_DEVICE_NUMBERS = 1 << 32  # what the event wire holds; Linux's majors and minors are far below


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SpecDevice:
    """One entry of linux.devices: a device node made inside the container."""

    path: str
    type: str  # c, b, u or p
    major: int
    minor: int


def parse_spec_devices(spec: bytes) -> tuple[SpecDevice, ...]:
    """The character and block devices of an OCI spec; SourceError when it is not a spec."""
    if not spec:
        return ()
    try:
        document = jsontext.loads(spec)
    except jsontext.JsonError as exc:
        raise errors.SourceError(f"OCI spec is not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise errors.SourceError("OCI spec is not a JSON object")
    linux = document.get("linux")
    entries = linux.get("devices") if isinstance(linux, dict) else None
    if not isinstance(entries, list):
        return ()
    return tuple(d for d in (_device(e) for e in entries) if d is not None)


def _device(entry: object) -> SpecDevice | None:
    """The entry as a device node; None for one that is none (a FIFO, a number that cannot be
    a device's, a field missing or of the wrong type): the rest of the spec is still read."""
    if not isinstance(entry, dict):
        return None
    path, kind = entry.get("path"), entry.get("type")
    major, minor = entry.get("major"), entry.get("minor")
    if not isinstance(path, str) or not isinstance(kind, str) or kind not in ("c", "b", "u"):
        return None
    if not _device_number(major) or not _device_number(minor):
        return None
    return SpecDevice(path=path, type="c" if kind == "u" else kind, major=major, minor=minor)


def _device_number(value: object) -> TypeGuard[int]:
    """A major or minor number as the OCI spec holds them (int64; Linux uses 12 and 20 bits)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _DEVICE_NUMBERS


def is_sandbox(labels: Mapping[str, str]) -> bool:
    """The pod's infra (pause) container, which Kubernetes users never see."""
    return labels.get(KIND) == "sandbox" or labels.get(CONTAINER_NAME) == "POD"


def pod_of(labels: Mapping[str, str]) -> Pod | None:
    """The pod a CRI container belongs to; None for containers made outside Kubernetes."""
    name, namespace = labels.get(POD_NAME, ""), labels.get(POD_NAMESPACE, "")
    if not name:
        return None
    return Pod(uid=labels.get(POD_UID, ""), name=name, namespace=namespace)


def container_name(container_id: str, labels: Mapping[str, str], runtime_name: str = "") -> str:
    """The Kubernetes container name; outside Kubernetes the runtime's name, else its id."""
    return labels.get(CONTAINER_NAME) or runtime_name or container_id
