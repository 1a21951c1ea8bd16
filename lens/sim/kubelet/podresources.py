"""The kubelet's pod-resources gRPC service (v1.PodResourcesLister) for a simulated node.

List, GetAllocatableResources and Get answer from the node's pods and the device allocator, as
the kubelet does: pods without devices appear with empty device lists, init containers too.
While `unavailable()` says so, List answers UNAVAILABLE, as a kubelet restarting does.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc

from lens.proto._generated.podresources.v1 import api_pb2, api_pb2_grpc
from lens.sim.kubelet.devices import Device, DeviceAllocator

JsonObject = dict[str, Any]


def _topology(devices: tuple[Device, ...]) -> api_pb2.TopologyInfo:
    nodes = sorted({d.numa_node for d in devices})
    return api_pb2.TopologyInfo(nodes=[api_pb2.NUMANode(ID=n) for n in nodes])


def pod_resources(pod: JsonObject, allocator: DeviceAllocator) -> api_pb2.PodResources:
    spec = pod.get("spec") or {}
    assignments = allocator.assignments(pod)
    containers = []
    for container in list(spec.get("initContainers") or []) + list(spec.get("containers") or []):
        devices = [
            api_pb2.ContainerDevices(
                resource_name=a.resource,
                device_ids=[d.id for d in a.devices],
                topology=_topology(a.devices),
            )
            for a in assignments
            if a.container == container["name"] and a.devices
        ]
        containers.append(api_pb2.ContainerResources(name=container["name"], devices=devices))
    metadata = pod["metadata"]
    return api_pb2.PodResources(
        name=metadata["name"], namespace=metadata["namespace"], containers=containers
    )


class PodResourcesService(api_pb2_grpc.PodResourcesListerServicer):
    def __init__(
        self,
        pods: Callable[[], list[JsonObject]],
        allocator: DeviceAllocator,
        *,
        unavailable: Callable[[], bool] = lambda: False,
    ) -> None:
        self._pods = pods
        self._allocator = allocator
        self._unavailable = unavailable

    def List(
        self, request: api_pb2.ListPodResourcesRequest, context: grpc.ServicerContext
    ) -> api_pb2.ListPodResourcesResponse:
        if self._unavailable():
            context.abort(grpc.StatusCode.UNAVAILABLE, "kubelet not serving pod resources")
        return api_pb2.ListPodResourcesResponse(
            pod_resources=[pod_resources(p, self._allocator) for p in self._pods()]
        )

    def GetAllocatableResources(
        self, request: api_pb2.AllocatableResourcesRequest, context: grpc.ServicerContext
    ) -> api_pb2.AllocatableResourcesResponse:
        devices = [
            api_pb2.ContainerDevices(
                resource_name=name, device_ids=[d.id], topology=_topology((d,))
            )
            for name, inventory in self._allocator.inventory.items()
            for d in inventory
        ]
        return api_pb2.AllocatableResourcesResponse(devices=devices)

    def Get(
        self, request: api_pb2.GetPodResourcesRequest, context: grpc.ServicerContext
    ) -> api_pb2.GetPodResourcesResponse:
        for pod in self._pods():
            metadata = pod["metadata"]
            if (metadata["name"], metadata["namespace"]) == (
                request.pod_name,
                request.pod_namespace,
            ):
                return api_pb2.GetPodResourcesResponse(
                    pod_resources=pod_resources(pod, self._allocator)
                )
        context.abort(
            grpc.StatusCode.NOT_FOUND, f"pod {request.pod_namespace}/{request.pod_name} not found"
        )
        raise AssertionError("abort raises")


def serve(
    socket_path: Path,
    pods: Callable[[], list[JsonObject]],
    allocator: DeviceAllocator,
    *,
    unavailable: Callable[[], bool] = lambda: False,
) -> grpc.Server:
    """PodResourcesLister on a unix socket at `socket_path` (replaced if there), started; List
    fails while `unavailable()`."""
    socket_path.parent.mkdir(parents=True, exist_ok=True)
    socket_path.unlink(missing_ok=True)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    # Generated code, untyped.
    api_pb2_grpc.add_PodResourcesListerServicer_to_server(  # type: ignore[no-untyped-call]
        PodResourcesService(pods, allocator, unavailable=unavailable), server
    )
    server.add_insecure_port(f"unix://{socket_path}")
    server.start()
    return server
