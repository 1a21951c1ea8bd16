"""`lens controller release-finalizers`: remove every Lens finalizer from a cluster.

The uninstall path: once no controller runs, its finalizers would hold deletions forever. Every
kind the API serves that can be listed and patched is scanned (whatever the configuration
said, since it may have changed), and the original Primus-Lens finalizer goes too.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator

import kubernetes
from kubernetes.client.exceptions import ApiException

from lens.kube.machinery import resources
from lens.kube.machinery.resources import Kind
from lens.kube.workloads import gpupods
from lens.kube.workloads.finalizers import FINALIZER, ORIGINAL_FINALIZER, patch_finalizers
from lens.runtime import errors

log = logging.getLogger(__name__)

OURS = (FINALIZER, ORIGINAL_FINALIZER)
_ATTEMPTS = 5


@dataclasses.dataclass(frozen=True, slots=True)
class Released:
    kind: str
    namespace: str
    name: str


def served_kinds(api: kubernetes.client.ApiClient) -> list[Kind]:
    """Every listable, patchable kind of the preferred version of each API group."""
    versions = ["v1"]
    groups = resources.request_json(api, "GET", "/apis")
    for group in groups.get("groups") or []:
        preferred = (group.get("preferredVersion") or {}).get("groupVersion")
        if preferred:
            versions.append(str(preferred))
    kinds: list[Kind] = []
    for version in versions:
        prefix = "/api/v1" if version == "v1" else f"/apis/{version}"
        listed = resources.request_json(api, "GET", prefix)
        for entry in listed.get("resources") or []:
            verbs = set(entry.get("verbs") or [])
            if "/" in str(entry.get("name")) or not {"list", "patch"} <= verbs:
                continue
            kinds.append(
                Kind(
                    api_version=version,
                    kind=str(entry.get("kind")),
                    plural=str(entry.get("name")),
                    namespaced=bool(entry.get("namespaced")),
                )
            )
    return kinds


def _objects(api: kubernetes.client.ApiClient, kind: Kind) -> Iterator[dict[str, object]]:
    token = ""
    while True:
        query: dict[str, object] = {"limit": 500}
        if token:
            query["continue"] = token
        page = resources.request_json(api, "GET", kind.collection_path(), query=query)
        yield from page.get("items") or []
        token = str((page.get("metadata") or {}).get("continue") or "")
        if not token:
            return


def release_all(api: kubernetes.client.ApiClient) -> list[Released]:
    """Remove Lens's finalizers from every object that has one; what was released."""
    released: list[Released] = []
    for kind in served_kinds(api):
        try:
            holders = [
                o
                for o in _objects(api, kind)
                if set(gpupods.metadata(o).get("finalizers") or []) & set(OURS)
            ]
        except ApiException as exc:  # a kind that lists with an error (e.g. forbidden)
            log.warning("cannot list", extra={"kind": kind.plural, "status": exc.status})
            continue
        for obj in holders:
            if _release(api, kind, obj):
                meta = gpupods.metadata(obj)
                released.append(
                    Released(kind.kind, str(meta.get("namespace") or ""), str(meta.get("name")))
                )
    return released


def _release(api: kubernetes.client.ApiClient, kind: Kind, obj: dict[str, object]) -> bool:
    """Patch the finalizers off, re-reading the object after a conflict."""
    meta = gpupods.metadata(obj)
    path = kind.object_path(str(meta.get("namespace") or ""), str(meta.get("name")))
    for _ in range(_ATTEMPTS):
        kept = [f for f in gpupods.metadata(obj).get("finalizers") or [] if f not in OURS]
        try:
            patch_finalizers(api, kind, obj, kept)
            return True
        except ApiException as exc:
            if exc.status == 404:
                return False
            if exc.status not in (409, 422):
                raise
        try:
            obj = resources.request_json(api, "GET", path)
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise
    raise errors.Conflict(f"{kind.kind} {path}: its finalizers kept changing; run again")
