"""The resource types the emulator serves and their discovery documents.

Built-in kinds come from a table; CustomResourceDefinitions add kinds at run time (store.py
registers them when a CRD is created). server.py answers /api, /apis and the per-version
resource lists from a Registry.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclasses.dataclass(frozen=True, slots=True)
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    status: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        """Storage identity: a kind is stored once, whatever version is asked for."""
        return (self.group, self.plural)

    @property
    def singular(self) -> str:
        return self.kind.lower()

    def discovery(self) -> list[dict[str, Any]]:
        entry: dict[str, Any] = {
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": VERBS,
        }
        if self.short_names:
            entry["shortNames"] = list(self.short_names)
        entries = [entry]
        if self.status:
            entries.append(
                {
                    "name": f"{self.plural}/status",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "kind": self.kind,
                    "verbs": ["get", "patch", "update"],
                }
            )
        return entries


BUILTIN: tuple[ResourceType, ...] = (
    ResourceType("", "v1", "pods", "Pod", True, ("po",)),
    ResourceType("", "v1", "nodes", "Node", False, ("no",)),
    ResourceType("", "v1", "services", "Service", True, ("svc",)),
    ResourceType("", "v1", "endpoints", "Endpoints", True, ("ep",), status=False),
    ResourceType("", "v1", "secrets", "Secret", True, status=False),
    ResourceType("", "v1", "configmaps", "ConfigMap", True, ("cm",), status=False),
    ResourceType("", "v1", "namespaces", "Namespace", False, ("ns",)),
    ResourceType("", "v1", "events", "Event", True, ("ev",), status=False),
    ResourceType("apps", "v1", "deployments", "Deployment", True, ("deploy",)),
    ResourceType("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",)),
    ResourceType("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",)),
    ResourceType("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",)),
    ResourceType("batch", "v1", "jobs", "Job", True),
    ResourceType("batch", "v1", "cronjobs", "CronJob", True, ("cj",)),
    ResourceType("coordination.k8s.io", "v1", "leases", "Lease", True, status=False),
    ResourceType("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True, status=False),
    ResourceType(
        "storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ("sc",), status=False
    ),
    ResourceType(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        ("crd",),
    ),
)

BUILTIN_GROUPS = frozenset(t.group for t in BUILTIN)

# The preferred version of each built-in group, for /apis.
_GROUP_ORDER = ("", "apps", "batch", "coordination.k8s.io", "discovery.k8s.io", "storage.k8s.io")


def from_crd(crd: dict[str, Any]) -> list[ResourceType]:
    """The resource types a CustomResourceDefinition declares, one per served version."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, plural, kind = spec.get("group"), names.get("plural"), names.get("kind")
    if not (group and plural and kind):
        raise ValueError("a CustomResourceDefinition needs spec.group, spec.names.plural and .kind")
    expected = f"{plural}.{group}"
    if (crd.get("metadata") or {}).get("name") != expected:
        raise ValueError(f"metadata.name must be {expected!r}")
    namespaced = spec.get("scope", "Namespaced") == "Namespaced"
    types = []
    for version in spec.get("versions") or []:
        if not version.get("served", True):
            continue
        has_status = "status" in (version.get("subresources") or {})
        types.append(
            ResourceType(
                group,
                version["name"],
                plural,
                kind,
                namespaced,
                tuple(names.get("shortNames") or ()),
                status=has_status,
            )
        )
    if not types:
        raise ValueError("a CustomResourceDefinition needs at least one served version")
    return types


class Registry:
    """Resource types by (group, version, plural), with the discovery documents built from them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._types: dict[tuple[str, str, str], ResourceType] = {}
        for rtype in BUILTIN:
            self._types[(rtype.group, rtype.version, rtype.plural)] = rtype

    def add(self, rtype: ResourceType) -> None:
        with self._lock:
            self._types[(rtype.group, rtype.version, rtype.plural)] = rtype

    def remove_group_plural(self, group: str, plural: str) -> None:
        with self._lock:
            for key in [k for k in self._types if k[0] == group and k[2] == plural]:
                del self._types[key]

    def find(self, group: str, version: str, plural: str) -> ResourceType | None:
        with self._lock:
            return self._types.get((group, version, plural))

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        with self._lock:
            for rtype in self._types.values():
                if rtype.group == group and rtype.version == version and rtype.kind == kind:
                    return rtype
        return None

    def all(self) -> list[ResourceType]:
        with self._lock:
            return list(self._types.values())

    def group_versions(self) -> dict[str, list[str]]:
        versions: dict[str, list[str]] = {}
        for rtype in self.all():
            listed = versions.setdefault(rtype.group, [])
            if rtype.version not in listed:
                listed.append(rtype.version)
        return versions

    def api_groups(self) -> dict[str, Any]:
        groups = []
        known = self.group_versions()
        order = [g for g in _GROUP_ORDER if g in known] + sorted(
            g for g in known if g not in _GROUP_ORDER
        )
        for group in order:
            if not group:
                continue
            versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in known[group]]
            groups.append({"name": group, "versions": versions, "preferredVersion": versions[0]})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        types = [t for t in self.all() if t.group == group and t.version == version]
        if not types:
            return None
        resources = [
            entry for t in sorted(types, key=lambda t: t.plural) for entry in t.discovery()
        ]
        group_version = f"{group}/{version}" if group else version
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": group_version,
            "resources": resources,
        }
