"""Raw requests to the API: discovery of a kind's resource, list/watch of any collection, JSON.

The reflector watches pods and nodes and, for owner chains, any kind an ownerReference names
(ReplicaSet, Job, PyTorchJob, a CRD...). The typed client has no functions for kinds found at
run time, and the dynamic client discovers every group of the cluster on first use; here one
GET of the group's resource list finds a kind's plural, and one list function serves them all.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Any

import kubernetes
from kubernetes.client.exceptions import ApiException

from lens.runtime import errors

JsonObject = dict[str, Any]

# The reflector's keyword arguments, as the typed list functions name them, and the API's names.
_QUERY_NAMES = {
    "limit": "limit",
    "_continue": "continue",
    "watch": "watch",
    "resource_version": "resourceVersion",
    "allow_watch_bookmarks": "allowWatchBookmarks",
    "timeout_seconds": "timeoutSeconds",
    "label_selector": "labelSelector",
    "field_selector": "fieldSelector",
}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Kind:
    api_version: str  # "v1", "apps/v1", "kubeflow.org/v1"
    kind: str
    plural: str
    namespaced: bool

    @property
    def group_prefix(self) -> str:
        return "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"

    def collection_path(self, namespace: str = "") -> str:
        """Every object of the kind (cluster-wide), or those of one namespace."""
        if namespace and self.namespaced:
            return f"{self.group_prefix}/namespaces/{namespace}/{self.plural}"
        return f"{self.group_prefix}/{self.plural}"

    def object_path(self, namespace: str, name: str) -> str:
        return f"{self.collection_path(namespace)}/{name}"


def _query_value(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def request(
    api: kubernetes.client.ApiClient,
    method: str,
    path: str,
    *,
    query: dict[str, object] | None = None,
    body: object = None,
    content_type: str = "application/json",
    timeout: Any = None,
) -> Any:
    """One request; the urllib3 response (unread). A non-2xx answer raises ApiException."""
    params = [(k, _query_value(v)) for k, v in (query or {}).items() if v is not None]
    headers = {"Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = content_type
    method, url, headers, data, _ = api.param_serialize(
        method,
        path,
        query_params=params,
        header_params=headers,
        body=body,
        auth_settings=["BearerToken"],
    )
    answer = api.call_api(method, url, headers, data, _request_timeout=timeout)
    if not 200 <= answer.status <= 299:
        answer.read()  # type: ignore[no-untyped-call]  # untyped upstream
        raise ApiException.from_response(http_resp=answer, body=None, data=None)
    return answer.response


def request_json(
    api: kubernetes.client.ApiClient,
    method: str,
    path: str,
    *,
    query: dict[str, object] | None = None,
    body: object = None,
    content_type: str = "application/json",
    timeout: Any = 30.0,
) -> JsonObject:
    """A request whose answer is a JSON object (GET, POST, PUT, PATCH, DELETE)."""
    response = request(
        api, method, path, query=query, body=body, content_type=content_type, timeout=timeout
    )
    return read_json(response, f"{method} {path}")


def read_json(response: Any, what: str) -> JsonObject:
    """The JSON object a raw response holds (its connection released); SourceError if none."""
    try:
        document = json.loads(response.data)
    except ValueError as exc:
        raise errors.SourceError(f"{what} answered no JSON: {exc}") from exc
    finally:
        response.release_conn()
    if not isinstance(document, dict):
        raise errors.SourceError(f"{what} answered no JSON object")
    return document


class Lister:
    """A list function over one collection, called as the typed client's list functions are."""

    def __init__(self, api: kubernetes.client.ApiClient, path: str) -> None:
        self._api = api
        self.path = path

    def __call__(
        self,
        *,
        _preload_content: bool = False,
        _request_timeout: Any = None,
        **arguments: object,
    ) -> Any:
        query: dict[str, object] = {}
        for name, value in arguments.items():
            if name not in _QUERY_NAMES:
                raise TypeError(f"unknown list argument {name}")
            query[_QUERY_NAMES[name]] = value
        return request(self._api, "GET", self.path, query=query, timeout=_request_timeout)


class Discovery:
    """Finds a kind's resource (its plural, whether namespaced) with one GET per group version."""

    def __init__(self, api: kubernetes.client.ApiClient) -> None:
        self._api = api
        self._groups: dict[str, dict[str, Kind]] = {}
        self._lock = threading.Lock()

    def find(self, api_version: str, kind: str) -> Kind:
        """The kind's resource; SourceError when the server does not serve it."""
        with self._lock:
            known = self._groups.get(api_version)
        if known is None or kind not in known:
            known = self._read(api_version)
            with self._lock:
                self._groups[api_version] = known
        found = known.get(kind)
        if found is None:
            raise errors.SourceError(f"the API serves no kind {kind} in {api_version}")
        return found

    def _read(self, api_version: str) -> dict[str, Kind]:
        prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        try:
            document = request_json(self._api, "GET", prefix)
        except ApiException as exc:
            if exc.status == 404:
                return {}
            raise
        kinds: dict[str, Kind] = {}
        for resource in document.get("resources") or []:
            name = str(resource.get("name") or "")
            if not name or "/" in name:  # subresources (status, scale, log...)
                continue
            kinds[str(resource.get("kind"))] = Kind(
                api_version=api_version,
                kind=str(resource.get("kind")),
                plural=name,
                namespaced=bool(resource.get("namespaced")),
            )
        return kinds


PODS = Kind(api_version="v1", kind="Pod", plural="pods", namespaced=True)
NODES = Kind(api_version="v1", kind="Node", plural="nodes", namespaced=False)
