"""Kubernetes REST semantics over the store: URL routing, verbs, discovery and CRDs.

`Api.handle()` takes a parsed request and returns a Reply: a JSON document, or a Watch whose
events server.py streams. HTTP itself (sockets, chunking, auth) stays in server.py.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal
from urllib.parse import parse_qs

from lens import __version__
from lens.sim.kube import resources, reviews, selectors, status
from lens.sim.kube.faults import Faults
from lens.sim.kube.resources import Registry, ResourceType
from lens.sim.kube.status import ApiError, bad_request, not_found
from lens.sim.kube.store import Store, meta
from lens.sim.kube.watching import Watch, WatchRequest

JsonObject = dict[str, Any]

_PATCH_TYPES: dict[str, Literal["merge", "strategic", "json"]] = {
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
    "application/json-patch+json": "json",
}


# Registries with ReturnDeletedObject: the others answer an immediate delete with a Status.
_RETURNS_DELETED_OBJECT = frozenset({"Pod"})


def _deleted_status(rtype: ResourceType, obj: JsonObject) -> JsonObject:
    details = {
        "name": meta(obj)["name"],
        "group": rtype.group,
        "kind": rtype.plural,
        "uid": meta(obj)["uid"],
    }
    return {**status.success(), "details": details}


@dataclasses.dataclass(frozen=True, slots=True)
class Reply:
    code: int
    body: JsonObject | None = None
    watch: Watch | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Target:
    """What a resource URL names."""

    rtype: ResourceType
    namespace: str | None
    name: str | None
    subresource: str


class Api:
    def __init__(self, store: Store, faults: Faults, *, bookmark_interval: float) -> None:
        self.store = store
        self.registry: Registry = store.registry
        self.faults = faults
        self.bookmark_interval = bookmark_interval
        self.token_reviews = reviews.TokenReviews()

    def handle(self, method: str, path: str, query: str, content_type: str, body: bytes) -> Reply:
        params = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}
        if path.rstrip("/") == reviews.PATH:
            return self._token_review(method, body)
        parts = [p for p in path.split("/") if p]
        discovery = self._discovery(parts)
        if discovery is not None:
            if method != "GET":
                raise ApiError(
                    405, "MethodNotAllowed", f"the server does not allow {method} on {path}"
                )
            return Reply(200, discovery)
        target = self._target(parts, path)
        return self._dispatch(method, target, params, content_type, body)

    def _token_review(self, method: str, body: bytes) -> Reply:
        """TokenReview: create-only, answered 201 with its status, never stored."""
        if method != "POST":
            raise ApiError(405, "MethodNotAllowed", f"the server does not allow {method} here")
        try:
            review = json.loads(body or b"{}")
        except ValueError as exc:
            raise bad_request(f"the body is no JSON: {exc}") from exc
        return Reply(201, self.token_reviews.review(review))

    # -- discovery -------------------------------------------------------------------------

    def _discovery(self, parts: list[str]) -> JsonObject | None:
        if parts == ["version"]:
            return {
                "major": "1",
                "minor": "31",
                "gitVersion": "v1.31.0-lens-sim",
                "gitCommit": f"lens-{__version__}",
                "gitTreeState": "clean",
                "buildDate": "2026-01-01T00:00:00Z",
                "goVersion": "go1.22.0",
                "compiler": "gc",
                "platform": "linux/amd64",
            }
        if parts == ["api"]:
            return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
        if parts == ["apis"]:
            return self.registry.api_groups()
        if len(parts) == 2 and parts[0] == "api":
            found = self.registry.resource_list("", parts[1])
            if found is None:
                raise not_found("", "/".join(parts))
            return found
        if len(parts) == 2 and parts[0] == "apis":
            for group in self.registry.api_groups()["groups"]:
                if group["name"] == parts[1]:
                    return {"kind": "APIGroup", "apiVersion": "v1", **group}
            raise not_found("", "/".join(parts))
        if len(parts) == 3 and parts[0] == "apis":
            found = self.registry.resource_list(parts[1], parts[2])
            if found is None:
                raise not_found("", "/".join(parts))
            return found
        return None

    # -- routing ---------------------------------------------------------------------------

    def _target(self, parts: list[str], path: str) -> Target:
        if len(parts) >= 2 and parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise not_found("", path)
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            candidate = self.registry.find(group, version, rest[2])
            if candidate is not None and candidate.namespaced:
                namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise not_found("", path)
        rtype = self.registry.find(group, version, rest[0])
        if rtype is None:
            raise not_found("", path)
        name = rest[1] if len(rest) > 1 else None
        subresource = rest[2] if len(rest) > 2 else ""
        if subresource and subresource != "status":
            raise not_found(f"{rtype.plural}/{subresource}", name or "")
        if subresource == "status" and not rtype.status:
            raise not_found(f"{rtype.plural}/status", name or "")
        if rtype.namespaced and name is not None and namespace is None:
            raise not_found("", path)
        return Target(rtype, namespace, name, subresource)

    def _dispatch(
        self, method: str, target: Target, params: dict[str, str], content_type: str, body: bytes
    ) -> Reply:
        store, rtype = self.store, target.rtype
        if target.name is None:
            if method == "GET":
                return self._list_or_watch(target, params)
            if method == "POST":
                created = self._create(target, _json(body))
                return Reply(201, created)
            if method == "DELETE":
                return Reply(200, self._delete_collection(target, params))
        elif method == "GET":
            return Reply(200, store.get(rtype, target.namespace, target.name))
        elif method == "PUT":
            updated = store.update(
                rtype, target.namespace, target.name, _json(body), subresource=target.subresource
            )
            return Reply(200, updated)
        elif method == "PATCH":
            return Reply(200, self._patch(target, content_type, body))
        elif method == "DELETE":
            options = _json(body) if body.strip() else {}
            propagation = options.get("propagationPolicy") or params.get("propagationPolicy")
            deleted = store.delete(
                rtype,
                target.namespace,
                target.name,
                propagation=propagation,
                preconditions=options.get("preconditions"),
            )
            gone_now = not meta(deleted).get("deletionTimestamp")
            if rtype.kind == "CustomResourceDefinition" and gone_now:
                self._forget_crd(deleted)
            if gone_now and rtype.kind not in _RETURNS_DELETED_OBJECT:
                return Reply(200, _deleted_status(rtype, deleted))
            return Reply(200, deleted)
        raise ApiError(405, "MethodNotAllowed", f"the server does not allow {method} here")

    # -- verbs -----------------------------------------------------------------------------

    def _selectors(
        self, rtype: ResourceType, params: dict[str, str]
    ) -> tuple[selectors.LabelSelector, selectors.FieldSelector]:
        try:
            labels = selectors.parse_label_selector(params.get("labelSelector"))
            fields = selectors.parse_field_selector(params.get("fieldSelector"), rtype.kind)
        except ValueError as exc:
            raise bad_request(str(exc)) from exc
        return labels, fields

    def _list_or_watch(self, target: Target, params: dict[str, str]) -> Reply:
        labels, fields = self._selectors(target.rtype, params)
        if params.get("watch", "").lower() in ("true", "1"):
            rv = params.get("resourceVersion", "")
            if rv not in ("", "0") and not rv.isdigit():
                raise bad_request(f"invalid resourceVersion {rv!r}")
            timeout = params.get("timeoutSeconds")
            request = WatchRequest(
                rtype=target.rtype,
                namespace=target.namespace,
                labels=labels,
                fields=fields,
                resource_version=rv,
                bookmarks=params.get("allowWatchBookmarks", "").lower() in ("true", "1"),
                timeout_seconds=float(timeout) if timeout else None,
            )
            return Reply(
                200,
                watch=Watch(
                    self.store, self.faults, request, bookmark_interval=self.bookmark_interval
                ),
            )
        limit = params.get("limit", "0")
        if not limit.isdigit():
            raise bad_request(f"invalid limit {limit!r}")
        page = self.store.list_page(
            target.rtype,
            target.namespace,
            labels=labels,
            fields=fields,
            limit=int(limit),
            continue_token=params.get("continue", ""),
        )
        metadata: JsonObject = {"resourceVersion": str(page.resource_version)}
        if page.continue_token:
            metadata["continue"] = page.continue_token
        if page.remaining is not None:
            metadata["remainingItemCount"] = page.remaining
        rtype = target.rtype
        return Reply(
            200,
            {
                "kind": f"{rtype.kind}List",
                "apiVersion": rtype.api_version,
                "metadata": metadata,
                "items": page.items,
            },
        )

    def _create(self, target: Target, body: Any) -> JsonObject:
        if target.rtype.kind != "CustomResourceDefinition":
            return self.store.create(target.rtype, target.namespace, body)
        try:
            types = resources.from_crd(body)
        except ValueError as exc:
            raise ApiError(422, "Invalid", f"CustomResourceDefinition is invalid: {exc}") from exc
        names = body["spec"]["names"]
        status = {
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
            ],
            "acceptedNames": names,
            "storedVersions": [t.version for t in types],
        }
        created = self.store.create(
            target.rtype, None, {**body, "status": status}, keep_status=True
        )
        for rtype in types:
            self.registry.add(rtype)
        return created

    def _forget_crd(self, crd: JsonObject) -> None:
        spec = crd.get("spec") or {}
        self.registry.remove_group_plural(
            spec.get("group", ""), (spec.get("names") or {}).get("plural", "")
        )

    def _patch(self, target: Target, content_type: str, body: bytes) -> JsonObject:
        media = content_type.split(";")[0].strip()
        kind = _PATCH_TYPES.get(media)
        if kind is None:
            raise ApiError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types "
                f"include: {', '.join(_PATCH_TYPES)}",
            )
        if kind == "strategic" and target.rtype.group not in resources.BUILTIN_GROUPS:
            raise ApiError(
                415,
                "UnsupportedMediaType",
                "strategic merge patch is not supported for custom resources",
            )
        return self.store.patch(
            target.rtype,
            target.namespace,
            target.name or "",
            kind,
            _json(body),
            subresource=target.subresource,
        )

    def _delete_collection(self, target: Target, params: dict[str, str]) -> JsonObject:
        labels, fields = self._selectors(target.rtype, params)
        items, _ = self.store.select(target.rtype, target.namespace, labels, fields)
        deleted = []
        for item in items:
            try:
                deleted.append(
                    self.store.delete(
                        target.rtype,
                        meta(item).get("namespace"),
                        meta(item)["name"],
                        propagation=params.get("propagationPolicy"),
                    )
                )
            except ApiError as exc:
                if exc.code != 404:
                    raise
        rtype = target.rtype
        return {
            "kind": f"{rtype.kind}List",
            "apiVersion": rtype.api_version,
            "metadata": {},
            "items": deleted,
        }


def _json(body: bytes) -> Any:
    try:
        return json.loads(body or b"null")
    except json.JSONDecodeError as exc:
        raise bad_request(f"the request body is not valid JSON: {exc}") from exc
