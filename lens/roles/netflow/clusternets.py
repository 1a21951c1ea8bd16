"""The cluster's own pod and Service networks, so that a peer is typed `k8sPod` or `k8sSvc`
without a config: the nodes' `spec.podCIDRs`, the ServiceCIDR objects (networking.k8s.io, GA
in Kubernetes 1.33, beta before), and kubeadm's ConfigMap as one more source — the original
knew only that ConfigMap and would not start without it. Each source that is not there (404) or
not allowed (403) is skipped; one that fails otherwise keeps its last networks."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable
from dataclasses import dataclass

import kubernetes
import yaml
from kubernetes.client.exceptions import ApiException

from lens.kube.machinery.resources import request_json
from lens.netflow.classify import Network

log = logging.getLogger(__name__)

SERVICE_CIDR_PATHS = (
    "/apis/networking.k8s.io/v1/servicecidrs",
    "/apis/networking.k8s.io/v1beta1/servicecidrs",
)
KUBEADM_CONFIG = "/api/v1/namespaces/kube-system/configmaps/kubeadm-config"
ABSENT = (403, 404)
TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterNetworks:
    pods: tuple[Network, ...] = ()
    services: tuple[Network, ...] = ()


def cidrs(values: object) -> tuple[Network, ...]:
    """The CIDRs of a list (or comma-separated text) that parse; others are skipped."""
    items = values.split(",") if isinstance(values, str) else values
    if not isinstance(items, list | tuple):
        return ()
    found = []
    for item in items:
        try:
            found.append(ipaddress.ip_network(str(item).strip(), strict=False))
        except ValueError:
            continue
    return tuple(found)


def parse_kubeadm(text: object) -> ClusterNetworks:
    """kubeadm's ClusterConfiguration: networking.podSubnet and serviceSubnet."""
    try:
        document = yaml.safe_load(str(text)) if text else None
    except (yaml.YAMLError, RecursionError):
        return ClusterNetworks()
    networking = document.get("networking") if isinstance(document, dict) else None
    if not isinstance(networking, dict):
        return ClusterNetworks()
    return ClusterNetworks(
        pods=cidrs(networking.get("podSubnet", "")),
        services=cidrs(networking.get("serviceSubnet", "")),
    )


class ClusterNetworkReader:
    """Reads every source; `read()` the networks now, the last ones of a failing source kept."""

    def __init__(self, api: Callable[[], kubernetes.client.ApiClient]) -> None:
        self._make_api = api
        self._api: kubernetes.client.ApiClient | None = None
        self._last: dict[str, ClusterNetworks] = {}
        self._failing: set[str] = set()

    def read(self) -> ClusterNetworks:
        for name, source in (
            ("nodes", self._nodes),
            ("servicecidrs", self._service_cidrs),
            ("kubeadm-config", self._kubeadm),
        ):
            try:
                self._last[name] = source()
            except ApiException as exc:
                if exc.status in ABSENT:
                    self._last[name] = ClusterNetworks()
                else:
                    self._note_failure(name, f"HTTP {exc.status}")
            except Exception as exc:  # any other failure (network, client) keeps the last
                self._note_failure(name, f"{type(exc).__name__}: {exc}")
            else:
                self._failing.discard(name)
        pods = tuple(dict.fromkeys(n for found in self._last.values() for n in found.pods))
        services = tuple(dict.fromkeys(n for found in self._last.values() for n in found.services))
        return ClusterNetworks(pods=pods, services=services)

    def _client(self) -> kubernetes.client.ApiClient:
        if self._api is None:
            self._api = self._make_api()
        return self._api

    def _nodes(self) -> ClusterNetworks:
        listed = request_json(self._client(), "GET", "/api/v1/nodes", timeout=TIMEOUT_SECONDS)
        found: list[Network] = []
        for node in listed.get("items") or []:
            spec = node.get("spec") or {}
            found += cidrs(spec.get("podCIDRs") or [spec.get("podCIDR") or ""])
        return ClusterNetworks(pods=tuple(found))

    def _service_cidrs(self) -> ClusterNetworks:
        for path in SERVICE_CIDR_PATHS:
            try:
                listed = request_json(self._client(), "GET", path, timeout=TIMEOUT_SECONDS)
            except ApiException as exc:
                if exc.status == 404:
                    continue  # not this version: the next
                raise
            found: list[Network] = []
            for item in listed.get("items") or []:
                found += cidrs((item.get("spec") or {}).get("cidrs") or [])
            return ClusterNetworks(services=tuple(found))
        return ClusterNetworks()

    def _kubeadm(self) -> ClusterNetworks:
        config = request_json(self._client(), "GET", KUBEADM_CONFIG, timeout=TIMEOUT_SECONDS)
        return parse_kubeadm((config.get("data") or {}).get("ClusterConfiguration"))

    def _note_failure(self, name: str, why: str) -> None:
        if name not in self._failing:
            log.warning(
                "cannot read the cluster's networks; the last ones stay",
                extra={"source": name, "error": why},
            )
        self._failing.add(name)
