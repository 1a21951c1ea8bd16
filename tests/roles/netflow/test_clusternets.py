"""The cluster's networks from the API emulator: nodes' podCIDRs, kubeadm's ConfigMap, and what
is not there skipped."""

from __future__ import annotations

import ipaddress

import kubernetes

from lens.roles.netflow import clusternets
from lens.sim.kube.server import KubeApiServer

KUBEADM = """\
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
networking:
  podSubnet: 10.244.0.0/16,fd00:244::/56
  serviceSubnet: 10.96.0.0/12
"""


def _node(name: str, cidrs: list[str]) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "spec": {"podCIDRs": cidrs},
    }


def test_nodes_and_kubeadm_give_the_networks(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    apiserver.create(_node("gpu-1", ["10.244.1.0/24", "fd00:244:0:1::/64"]))
    apiserver.create(_node("gpu-2", ["10.244.2.0/24"]))
    apiserver.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kubeadm-config", "namespace": "kube-system"},
            "data": {"ClusterConfiguration": KUBEADM},
        }
    )
    found = clusternets.ClusterNetworkReader(lambda: api_client).read()
    net = ipaddress.ip_network
    assert set(found.pods) == {
        net("10.244.1.0/24"),
        net("fd00:244:0:1::/64"),
        net("10.244.2.0/24"),
        net("10.244.0.0/16"),
        net("fd00:244::/56"),
    }
    assert found.services == (net("10.96.0.0/12"),)  # no ServiceCIDR objects here: kubeadm's


def test_a_cluster_without_kubeadm_or_servicecidrs_is_no_failure(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    apiserver.create(_node("gpu-1", ["10.244.1.0/24"]))
    reader = clusternets.ClusterNetworkReader(lambda: api_client)
    assert reader.read() == clusternets.ClusterNetworks(
        pods=(ipaddress.ip_network("10.244.1.0/24"),)
    )
    apiserver.stop()
    # The API gone: the last networks stay.
    assert reader.read().pods == (ipaddress.ip_network("10.244.1.0/24"),)


def test_kubeadm_text_of_any_shape() -> None:
    assert clusternets.parse_kubeadm("networking: {podSubnet: 'x,10.0.0.0/8'}") == (
        clusternets.ClusterNetworks(pods=(ipaddress.ip_network("10.0.0.0/8"),))
    )
    for text in ("", "[", "- 1", "networking: 5", None):
        assert clusternets.parse_kubeadm(text) == clusternets.ClusterNetworks()
