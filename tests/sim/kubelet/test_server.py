"""The simulated kubelet over real HTTPS (CA-verified, bearer token) and a real gRPC socket."""

from __future__ import annotations

import json
import socket
import ssl
import urllib.request
from pathlib import Path
from urllib.error import HTTPError

import grpc
import pytest

from lens.proto._generated.podresources.v1 import api_pb2, api_pb2_grpc
from lens.sim.kubelet.server import KubeletServer

from .conftest import Node


def _get(node: Node, path: str, token: str | None = "sim-kubelet-token") -> dict[str, object]:
    context = ssl.create_default_context(cafile=str(node.kubelet.cert.ca_file))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(node.kubelet.url + path, headers=headers)
    with urllib.request.urlopen(request, context=context, timeout=5) as response:
        return json.loads(response.read())


def _lister(node: Node) -> tuple[grpc.Channel, api_pb2_grpc.PodResourcesListerStub]:
    channel = grpc.insecure_channel(f"unix://{node.kubelet.socket_path}")
    return channel, api_pb2_grpc.PodResourcesListerStub(channel)


def test_pods_lists_what_the_api_server_holds_for_this_node(node: Node) -> None:
    node.pod("train-0", gpus=8)
    node.pod("elsewhere", node="gpu-node-2")
    listed = _get(node, "/pods")
    assert listed["kind"] == "PodList"
    assert [p["metadata"]["name"] for p in listed["items"]] == ["train-0"]  # type: ignore[index]


def test_a_bearer_token_is_required_and_can_rotate(node: Node) -> None:
    for token in (None, "wrong"):
        with pytest.raises(HTTPError) as refused:
            _get(node, "/pods", token)
        assert refused.value.code == 401
        refused.value.close()  # an HTTPError holds the response open
    node.kubelet.set_token("rotated")
    with pytest.raises(HTTPError) as stale:
        _get(node, "/pods")
    stale.value.close()
    assert _get(node, "/pods", "rotated")["kind"] == "PodList"


def test_tls_is_verified_against_the_kubelet_ca(node: Node) -> None:
    address = ("127.0.0.1", int(node.kubelet.url.rsplit(":", 1)[1]))
    strict = ssl.create_default_context()
    with (
        socket.create_connection(address, timeout=5) as raw,
        pytest.raises(ssl.SSLCertVerificationError),
    ):
        strict.wrap_socket(raw, server_hostname="127.0.0.1")
    trusting = ssl.create_default_context(cafile=str(node.kubelet.cert.ca_file))
    with (
        socket.create_connection(address, timeout=5) as raw,
        trusting.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        assert tls.version() in ("TLSv1.2", "TLSv1.3")


def test_stats_summary_has_the_real_shape_and_grows(node: Node) -> None:
    node.pod("train-0", gpus=2)
    first = _get(node, "/stats/summary")
    assert first["node"]["nodeName"] == "gpu-node-1"  # type: ignore[index]
    pod = first["pods"][0]  # type: ignore[index]
    assert pod["podRef"]["name"] == "train-0"
    assert set(pod) >= {
        "podRef",
        "startTime",
        "containers",
        "network",
        "volume",
        "ephemeral-storage",
        "process_stats",
    }
    storage = pod["ephemeral-storage"]
    assert storage["availableBytes"] + storage["usedBytes"] == storage["capacityBytes"]
    assert pod["process_stats"]["process_count"] > 0
    node.clock.advance(600)
    later = _get(node, "/stats/summary")["pods"][0]  # type: ignore[index]
    assert later["ephemeral-storage"]["usedBytes"] > storage["usedBytes"]


def test_pod_resources_lists_gpu_pci_addresses_per_container(node: Node) -> None:
    node.pod("train-0", gpus=4)
    node.pod("train-1", gpus=2, init_gpus=1)
    node.pod("cpu-only")
    channel, lister = _lister(node)
    with channel:
        listed = lister.List(api_pb2.ListPodResourcesRequest())
        by_pod = {p.name: p for p in listed.pod_resources}
        assert set(by_pod) == {"train-0", "train-1", "cpu-only"}
        trainer = by_pod["train-0"].containers[0]
        assert trainer.name == "trainer"
        (devices,) = trainer.devices
        bdfs = [g.bdf for g in node.tree.node.gpus]
        assert devices.resource_name == "amd.com/gpu"
        assert list(devices.device_ids) == bdfs[:4]
        assert [n.ID for n in devices.topology.nodes] == [0]
        second = {
            c.name: [list(d.device_ids) for d in c.devices] for c in by_pod["train-1"].containers
        }
        assert second["warmup"] == [bdfs[4:5]]
        assert second["trainer"] == [bdfs[4:6]], "app containers reuse what init containers held"
        assert second["sidecar"] == []
        assert all(not c.devices for c in by_pod["cpu-only"].containers)
        allocatable = lister.GetAllocatableResources(api_pb2.AllocatableResourcesRequest())
        assert sorted(d.device_ids[0] for d in allocatable.devices) == sorted(bdfs)


def test_devices_return_when_a_pod_finishes_and_get_finds_one_pod(node: Node) -> None:
    node.pod("first", gpus=8)
    channel, lister = _lister(node)
    with channel:
        lister.List(api_pb2.ListPodResourcesRequest())
        pods = node.kube.resource("v1", "Pod")
        node.kube.store.put_status(pods, "default", "first", {"phase": "Succeeded"})
        node.pod("second", gpus=8)
        got = lister.Get(api_pb2.GetPodResourcesRequest(pod_name="second", pod_namespace="default"))
        assert len(got.pod_resources.containers[0].devices[0].device_ids) == 8
        with pytest.raises(grpc.RpcError) as missing:
            lister.Get(api_pb2.GetPodResourcesRequest(pod_name="first", pod_namespace="default"))
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_kubelet_may_serve_pods_without_its_pod_resources_socket(
    node: Node, tmp_path: Path
) -> None:
    bare = KubeletServer(node.kube.store, "gpu-node-1", directory=tmp_path / "bare")
    bare.start(pod_resources=False)
    try:
        context = ssl.create_default_context(cafile=str(bare.cert.ca_file))
        request = urllib.request.Request(
            bare.url + "/pods", headers={"Authorization": "Bearer sim-kubelet-token"}
        )
        with urllib.request.urlopen(request, context=context, timeout=5) as response:
            assert json.loads(response.read())["kind"] == "PodList"
        assert not bare.socket_path.exists()
    finally:
        bare.stop()
