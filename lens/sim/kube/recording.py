"""Each request the emulator serves, as Kubernetes' authorizer sees it: verb, API group,
resource, subresource, namespace and name (or a non-resource path such as /apis).

server.py records every request here before answering it; RBAC tests read the record to prove
a role's rules allow all it asked, and may hand the server an authorizer that answers 403.
The parsing follows the API server's RequestInfoFactory (k8s.io/apiserver, requestinfo.go).
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from urllib.parse import parse_qs

# HTTP methods and the verbs the API server (and a kubelet) authorizes them as (a GET or DELETE
# without a name becomes list/watch or deletecollection below).
HTTP_VERBS = {
    "GET": "get",
    "HEAD": "get",
    "POST": "create",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}
_SPECIAL_VERBS = frozenset({"proxy", "watch"})  # the deprecated /api/v1/watch/... paths
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ApiRequest:
    """One request's authorization attributes. A non-resource request (discovery, /version)
    has `resource_request` False, `path` and a verb from its HTTP method alone."""

    verb: str
    resource_request: bool = True
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""

    def describe(self) -> str:
        """The request as an RBAC denial would name it."""
        if not self.resource_request:
            return f"{self.verb} {self.path}"
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        where = f"namespace {self.namespace}" if self.namespace else "cluster scope"
        named = f" {self.name!r}" if self.name else ""
        return f"{self.verb} {resource}{named} of API group {self.api_group!r} in {where}"


def _non_resource(method: str, path: str) -> ApiRequest:
    return ApiRequest(verb=method.lower(), resource_request=False, path=path)


def parse_request(method: str, path: str, query: str) -> ApiRequest:
    """The attributes of `method path?query`, as the API server derives them."""
    parts = [p for p in path.strip("/").split("/") if p]
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return _non_resource(method, path)
    group = ""
    rest = parts[1:]
    if parts[0] == "apis":
        if len(rest) < 3:  # /apis/GROUP/VERSION: discovery
            return _non_resource(method, path)
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    verb = HTTP_VERBS.get(method.upper(), "")
    if rest[0] in _SPECIAL_VERBS:
        if len(rest) < 2:
            return _non_resource(method, path)
        verb, rest = rest[0], rest[1:]
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 and verb != "proxy" else ""
    params = parse_qs(query, keep_blank_values=True)
    if not name and verb == "get":
        verb = "watch" if _is_true(params.get("watch")) else "list"
        name = _exact_name(params)
    if not name and verb == "delete":
        verb = "deletecollection"
    return ApiRequest(
        verb=verb,
        api_group=group,
        api_version=version,
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=name,
        path=path,
    )


def _is_true(values: list[str] | None) -> bool:
    """A boolean query parameter as the API server converts it: absent, `0` or `false` (any
    case) is false, anything else (an empty value too) true; the first value counts."""
    if not values:
        return False
    return values[0] != "0" and values[0].lower() != "false"


def _exact_name(params: dict[str, list[str]]) -> str:
    """A list or watch of one object by `fieldSelector=metadata.name=NAME` is authorized as a
    request naming it (so resourceNames rules apply), as the API server does."""
    selector = (params.get("fieldSelector") or [""])[0]
    for term in selector.split(","):
        key, sep, value = term.partition("==") if "==" in term else term.partition("=")
        value = value.strip()
        valid = value not in ("", ".", "..") and not set(value) & {"/", "%"}
        if sep and key.strip() == "metadata.name" and not key.endswith("!") and valid:
            return value
    return ""


class RequestLog:
    """Every request served, counted by its attributes (bounded by the distinct requests, not
    by their number: a long `lens demo` repeats the same few)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: collections.Counter[ApiRequest] = collections.Counter()

    def add(self, request: ApiRequest) -> None:
        with self._lock:
            self._seen[request] += 1

    def recorded(self) -> collections.Counter[ApiRequest]:
        with self._lock:
            return collections.Counter(self._seen)

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()
