"""Ephemeral storage from the kubelet's /stats/summary: each pod's use and the node's file systems.

Pod use is the kubelet's `ephemeral-storage` (writable layers, logs and disk-backed emptyDirs);
the node's root file system is `node.fs`, the image store `node.runtime.imageFs`. Numbers the
kubelet omits (it leaves out what it does not know) stay None. The node agent renders both the
original exporter's series and Lens's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from lens.runtime import errors
from lens.runtime.families import FamilyGroup, FamilySpec, one


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FsUsage:
    used_bytes: int | None
    available_bytes: int | None
    capacity_bytes: int | None

    @property
    def used_ratio(self) -> float | None:
        if self.used_bytes is None or not self.capacity_bytes:
            return None
        return self.used_bytes / self.capacity_bytes


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PodStorage:
    namespace: str
    name: str
    used_bytes: int


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeFs:
    fs: str  # root (kubelet's /var/lib/kubelet) or image (the container image store)
    usage: FsUsage


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class EphemeralStorage:
    node: str
    filesystems: tuple[NodeFs, ...]
    pods: tuple[PodStorage, ...]

    def root(self) -> FsUsage | None:
        return next((f.usage for f in self.filesystems if f.fs == "root"), None)


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _bytes(value: object) -> int | None:
    """A byte count: an integer within 0..2^64-1 (what a file system can hold), else unknown."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64:
        return value
    return None


def _text(value: object) -> str:
    """A name as a label may hold it: lone surrogates (JSON's "\\ud800") replaced, no NULs;
    "" for what is no string or number (str() of a deeply nested list could even recurse)."""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return ""
    return str(value).encode(errors="replace").decode().replace("\0", "")


def parse_fs(value: object) -> FsUsage:
    stats = _mapping(value)
    return FsUsage(
        used_bytes=_bytes(stats.get("usedBytes")),
        available_bytes=_bytes(stats.get("availableBytes")),
        capacity_bytes=_bytes(stats.get("capacityBytes")),
    )


def parse_summary(document: object) -> EphemeralStorage:
    """kubelet /stats/summary -> the node's file systems and each pod's ephemeral storage."""
    summary = _mapping(document)
    node, listed = _mapping(summary.get("node")), summary.get("pods") or []
    if not node or not isinstance(listed, list):
        raise errors.SourceError("kubelet /stats/summary: not a Summary (no node)")
    filesystems = [NodeFs(fs="root", usage=parse_fs(node.get("fs")))]
    image = _mapping(node.get("runtime")).get("imageFs")
    if image is not None:
        filesystems.append(NodeFs(fs="image", usage=parse_fs(image)))
    pods = []
    for pod in listed:
        ref = _mapping(_mapping(pod).get("podRef"))
        used = parse_fs(_mapping(pod).get("ephemeral-storage")).used_bytes
        if ref and used is not None:
            pods.append(
                PodStorage(
                    namespace=_text(ref.get("namespace", "")),
                    name=_text(ref.get("name", "")),
                    used_bytes=used,
                )
            )
    return EphemeralStorage(
        node=_text(node.get("nodeName", "")), filesystems=tuple(filesystems), pods=tuple(pods)
    )


NODE_FS_FAMILIES: FamilyGroup[NodeFs] = FamilyGroup(
    identity_labels=("fs",),
    identity=lambda f: (f.fs,),
    specs=(
        FamilySpec(
            name="lens_kube_node_fs_used_bytes",
            help="Bytes used on a node file system the kubelet manages (root or image).",
            type="gauge",
            samples=lambda f: one(f.usage.used_bytes),
        ),
        FamilySpec(
            name="lens_kube_node_fs_available_bytes",
            help="Bytes available to pods on a node file system (root or image).",
            type="gauge",
            samples=lambda f: one(f.usage.available_bytes),
        ),
        FamilySpec(
            name="lens_kube_node_fs_capacity_bytes",
            help="Size of a node file system (root or image), in bytes.",
            type="gauge",
            samples=lambda f: one(f.usage.capacity_bytes),
        ),
    ),
)

POD_FAMILIES: FamilyGroup[PodStorage] = FamilyGroup(
    identity_labels=("namespace", "pod"),
    identity=lambda p: (p.namespace, p.name),
    specs=(
        FamilySpec(
            name="lens_kube_pod_ephemeral_storage_used_bytes",
            help="Ephemeral storage a pod uses (writable layers, logs, emptyDirs), in bytes.",
            type="gauge",
            samples=lambda p: one(p.used_bytes),
        ),
    ),
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeStorage:
    """The node's root file system under the node's name (the original's series)."""

    node: str
    usage: FsUsage


COMPAT_NODE_FAMILIES: FamilyGroup[NodeStorage] = FamilyGroup(
    identity_labels=("node",),
    identity=lambda n: (n.node,),
    specs=(
        FamilySpec(
            name="node_ephemeral_storage_usage_bytes",
            help="Bytes used on the node's root file system (the original exporter's name).",
            type="gauge",
            samples=lambda n: one(n.usage.used_bytes),
            stability="stable",
        ),
        FamilySpec(
            name="node_ephemeral_storage_available_bytes",
            help="Bytes available on the node's root file system (the original exporter's name).",
            type="gauge",
            samples=lambda n: one(n.usage.available_bytes),
            stability="stable",
        ),
        FamilySpec(
            name="node_ephemeral_storage_capacity_bytes",
            help="Size of the node's root file system in bytes (the original exporter's name).",
            type="gauge",
            samples=lambda n: one(n.usage.capacity_bytes),
            stability="stable",
        ),
        FamilySpec(
            name="node_ephemeral_storage_usage_percent",
            help="Used share of the node's root file system as a ratio from 0 to 1, despite the "
            "name (the original exporter's name and value).",
            type="gauge",
            samples=lambda n: one(n.usage.used_ratio),
            stability="stable",
        ),
    ),
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CompatPodStorage:
    node: str
    pod: PodStorage


COMPAT_POD_FAMILIES: FamilyGroup[CompatPodStorage] = FamilyGroup(
    identity_labels=("pod_namespace", "pod_name", "node"),
    identity=lambda c: (c.pod.namespace, c.pod.name, c.node),
    specs=(
        FamilySpec(
            name="pod_ephemeral_storage_usage_bytes",
            help="Ephemeral storage a pod uses, in bytes (the original exporter's name).",
            type="gauge",
            samples=lambda c: one(c.pod.used_bytes),
            stability="stable",
        ),
    ),
)
