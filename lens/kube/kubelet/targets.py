"""A headless Service and its EndpointSlices listing every node's kubelet, for Prometheus.

Ports 10250 (https-metrics), 10255 (http-metrics) and 4194 (cadvisor), named as the original
named them (REFERENCE.md 11.3) so existing scrape configs keep working. Each node is one
endpoint (its first InternalIP, else ExternalIP) in the slice of its address family, at most
1000 per slice. Objects are compared with what the API holds and replaced with their
resourceVersion when they differ (the original sent none and so never updated them); slices
no longer wanted are deleted.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Sequence
from typing import Any

import kubernetes
from kubernetes.client.exceptions import ApiException

from lens.kube.kubelet import nodes
from lens.kube.machinery import resources

log = logging.getLogger(__name__)

SERVICES = resources.Kind(api_version="v1", kind="Service", plural="services", namespaced=True)
SLICES = resources.Kind(
    api_version="discovery.k8s.io/v1",
    kind="EndpointSlice",
    plural="endpointslices",
    namespaced=True,
)
PORTS = (("https-metrics", 10250), ("http-metrics", 10255), ("cadvisor", 4194))
MANAGED_BY = "lens-controller"
SLICE_CAPACITY = 1000
JsonObject = dict[str, Any]


def _labels() -> dict[str, str]:
    return {
        "app.kubernetes.io/managed-by": "lens",
        "app.kubernetes.io/name": "kubelet",
        "k8s-app": "kubelet",
    }


def desired_service(namespace: str, name: str) -> JsonObject:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": _labels()},
        "spec": {
            "clusterIP": "None",
            "ports": [
                {"name": port_name, "port": port, "protocol": "TCP", "targetPort": port}
                for port_name, port in PORTS
            ],
        },
    }


def _ready(node: JsonObject) -> bool:
    status = node.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return False


def _endpoints(node_list: Sequence[JsonObject]) -> dict[str, list[JsonObject]]:
    """Endpoints by address type (IPv4, IPv6): each node once, by its first address."""
    families: dict[str, list[JsonObject]] = {"IPv4": [], "IPv6": []}
    for node in sorted(node_list, key=nodes.name_of):
        found = nodes.addresses(node)
        if not found:
            continue
        address = found[0]
        family = "IPv4" if ipaddress.ip_address(address).version == 4 else "IPv6"
        families[family].append(
            {
                "addresses": [address],
                "conditions": {"ready": _ready(node)},
                "nodeName": nodes.name_of(node),
                "targetRef": {"kind": "Node", "name": nodes.name_of(node)},
            }
        )
    return families


def desired_slices(
    namespace: str, service: str, node_list: Sequence[JsonObject]
) -> list[JsonObject]:
    slices = []
    for family, endpoints in _endpoints(node_list).items():
        for index, start in enumerate(range(0, len(endpoints), SLICE_CAPACITY)):
            slices.append(
                {
                    "apiVersion": SLICES.api_version,
                    "kind": SLICES.kind,
                    "metadata": {
                        "name": f"{service}-{family.lower()}-{index}",
                        "namespace": namespace,
                        "labels": {
                            **_labels(),
                            "kubernetes.io/service-name": service,
                            "endpointslice.kubernetes.io/managed-by": MANAGED_BY,
                        },
                    },
                    "addressType": family,
                    "endpoints": endpoints[start : start + SLICE_CAPACITY],
                    "ports": [
                        {"name": port_name, "port": port, "protocol": "TCP"}
                        for port_name, port in PORTS
                    ],
                }
            )
    return slices


def _differs(current: JsonObject, wanted: JsonObject, fields: Sequence[str]) -> bool:
    labels = (current.get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in wanted["metadata"]["labels"].items()):
        return True
    return any(_subset_differs(current.get(f), wanted.get(f)) for f in fields)


def _subset_differs(current: object, wanted: object) -> bool:
    """Whether `wanted` is not contained in `current` (the server adds defaults)."""
    if isinstance(wanted, dict):
        if not isinstance(current, dict):
            return True
        return any(_subset_differs(current.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list):
        if not isinstance(current, list) or len(current) != len(wanted):
            return True
        return any(_subset_differs(c, w) for c, w in zip(current, wanted, strict=True))
    return current != wanted


class KubeletTargets:
    """Keeps one cluster's kubelet Service and EndpointSlices in step with its nodes."""

    def __init__(self, api: kubernetes.client.ApiClient, *, namespace: str, name: str) -> None:
        self._api = api
        self._namespace = namespace
        self._name = name

    def reconcile(self, node_list: Sequence[JsonObject]) -> int:
        """Create, replace or delete what differs; how many objects were written."""
        written = self._apply(SERVICES, desired_service(self._namespace, self._name), ("spec",))
        wanted = desired_slices(self._namespace, self._name, node_list)
        for body in wanted:
            written += self._apply(SLICES, body, ("addressType", "endpoints", "ports"))
        keep = {body["metadata"]["name"] for body in wanted}
        for stale in self._managed_slices():
            if stale not in keep:
                resources.request_json(
                    self._api, "DELETE", SLICES.object_path(self._namespace, stale)
                )
                written += 1
        return written

    def _apply(self, kind: resources.Kind, body: JsonObject, fields: Sequence[str]) -> int:
        path = kind.object_path(self._namespace, body["metadata"]["name"])
        try:
            current = resources.request_json(self._api, "GET", path)
        except ApiException as exc:
            if exc.status != 404:
                raise
            resources.request_json(
                self._api, "POST", kind.collection_path(self._namespace), body=body
            )
            return 1
        if not _differs(current, body, fields):
            return 0
        replacement = dict(body)
        metadata = dict(body["metadata"])
        metadata["resourceVersion"] = current["metadata"]["resourceVersion"]
        replacement["metadata"] = metadata
        if kind is SERVICES:  # clusterIP and friends are set by the server and immutable
            replacement["spec"] = {**current.get("spec", {}), **body["spec"]}
        resources.request_json(self._api, "PUT", path, body=replacement)
        return 1

    def _managed_slices(self) -> list[str]:
        selector = (
            f"kubernetes.io/service-name={self._name},"
            f"endpointslice.kubernetes.io/managed-by={MANAGED_BY}"
        )
        listed = resources.request_json(
            self._api,
            "GET",
            SLICES.collection_path(self._namespace),
            query={"labelSelector": selector},
        )
        return [str(item["metadata"]["name"]) for item in listed.get("items") or []]
