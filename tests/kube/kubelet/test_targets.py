"""The kubelet Service and EndpointSlices follow the nodes, on the API emulator."""

from __future__ import annotations

from typing import Any

import kubernetes
from hypothesis import given
from hypothesis import strategies as st

from lens.kube.kubelet.targets import SERVICES, SLICES, KubeletTargets, desired_slices
from lens.kube.machinery import resources
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests


def _nodes(count: int, *, first: int = 0) -> list[dict[str, Any]]:
    return [
        manifests.node(f"gpu-{i}", model="MI300X", gpus=8, address=f"10.0.{i // 250}.{i % 250 + 1}")
        for i in range(first, first + count)
    ]


JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.text(max_size=8), st.ip_addresses().map(str)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)


def _slice(api: kubernetes.client.ApiClient, name: str) -> dict[str, Any]:
    return resources.request_json(api, "GET", SLICES.object_path("kube-system", name))


def test_nodes_coming_and_going_are_written_through(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    targets = KubeletTargets(api_client, namespace="kube-system", name="lens-kubelet")
    assert targets.reconcile(_nodes(3)) == 2  # the Service and one IPv4 slice
    service = resources.request_json(
        api_client, "GET", SERVICES.object_path("kube-system", "lens-kubelet")
    )
    assert service["spec"]["clusterIP"] == "None"
    assert [p["port"] for p in service["spec"]["ports"]] == [10250, 10255, 4194]
    assert service["metadata"]["labels"]["k8s-app"] == "kubelet"
    found = _slice(api_client, "lens-kubelet-ipv4-0")
    assert found["metadata"]["labels"]["kubernetes.io/service-name"] == "lens-kubelet"
    assert [e["nodeName"] for e in found["endpoints"]] == ["gpu-0", "gpu-1", "gpu-2"]
    assert found["endpoints"][0]["addresses"] == ["10.0.0.1"]
    assert targets.reconcile(_nodes(3)) == 0, "nothing changed, nothing written"
    assert targets.reconcile(_nodes(2, first=1)) == 1  # gpu-0 gone
    assert [e["nodeName"] for e in _slice(api_client, "lens-kubelet-ipv4-0")["endpoints"]] == [
        "gpu-1",
        "gpu-2",
    ]
    not_ready = _nodes(1, first=1)
    not_ready[0]["status"]["conditions"] = [manifests.ready_condition(False)]
    targets.reconcile(not_ready)
    endpoints = _slice(api_client, "lens-kubelet-ipv4-0")["endpoints"]
    assert endpoints == [
        {
            "addresses": ["10.0.0.2"],
            "conditions": {"ready": False},
            "nodeName": "gpu-1",
            "targetRef": {"kind": "Node", "name": "gpu-1"},
        }
    ]


def test_a_large_cluster_is_split_and_stale_slices_deleted(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> None:
    targets = KubeletTargets(api_client, namespace="kube-system", name="k")
    many = _nodes(1200)
    many[0]["status"]["addresses"] = [{"type": "InternalIP", "address": "fd00::1"}]
    targets.reconcile(many)
    assert len(_slice(api_client, "k-ipv4-0")["endpoints"]) == 1000
    assert len(_slice(api_client, "k-ipv4-1")["endpoints"]) == 199
    assert _slice(api_client, "k-ipv6-0")["addressType"] == "IPv6"
    assert targets.reconcile(_nodes(10)) == 3  # one slice rewritten, two deleted
    listed = resources.request_json(api_client, "GET", SLICES.collection_path("kube-system"))
    assert sorted(i["metadata"]["name"] for i in listed["items"]) == ["k-ipv4-0"]


def test_slices_follow_the_original_port_names() -> None:
    slices = desired_slices("kube-system", "k", _nodes(1))
    assert [p["name"] for p in slices[0]["ports"]] == ["https-metrics", "http-metrics", "cadvisor"]


def test_nodes_with_odd_conditions_are_endpoints_not_ready() -> None:
    # A condition list of strings raised AttributeError while building the slices.
    node = _nodes(1)[0]
    node["status"]["conditions"] = ["Ready", {"type": "Ready", "status": ["True"]}]
    odd = {"metadata": {"name": "odd"}, "status": {"conditions": {"type": "Ready"}}}
    (slice_,) = desired_slices("kube-system", "k", [node, odd])
    (endpoint,) = slice_["endpoints"]
    assert endpoint["nodeName"] == "gpu-0" and endpoint["conditions"] == {"ready": False}


ADDRESSES = st.fixed_dictionaries(
    {"type": st.sampled_from(["InternalIP", "ExternalIP"]), "address": JSON}
)
CONDITIONS = st.fixed_dictionaries({"type": st.just("Ready"), "status": JSON})
NODES = st.fixed_dictionaries(
    {
        "metadata": st.one_of(JSON, st.fixed_dictionaries({"name": JSON})),
        "status": st.one_of(
            JSON,
            st.fixed_dictionaries(
                {
                    "addresses": st.one_of(JSON, st.lists(st.one_of(JSON, ADDRESSES), max_size=3)),
                    "conditions": st.one_of(
                        JSON, st.lists(st.one_of(JSON, CONDITIONS), max_size=2)
                    ),
                }
            ),
        ),
    }
)


@given(st.lists(NODES, max_size=4))
def test_any_node_list_gives_slices(node_list: list[Any]) -> None:
    for slice_ in desired_slices("kube-system", "k", node_list):
        assert slice_["addressType"] in ("IPv4", "IPv6")
        for endpoint in slice_["endpoints"]:
            assert isinstance(endpoint["conditions"]["ready"], bool)
