"""Which devices the kubelet allocated to each container, from its pod-resources API (v1 List).

The OCI spec of a privileged container lists every device node of the host, and NVIDIA's
runtime adds GPUs without listing them at all; the kubelet's allocation is the authority on which
GPUs a container was given. List has no pod uid, so allocations are keyed by (namespace, pod
name, container name) (shared/formats/kubelet.md section 3). Device ids are the plugins' own:
the GPU's PCI address for amd.com/*, its UUID for nvidia.com/*, `<id>::<replica>` when shared.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence

import grpc

from lens.containers.model import Pod
from lens.containers.node.attribution import KnownDevice
from lens.proto._generated.podresources.v1 import api_pb2, api_pb2_grpc
from lens.runtime import errors

log = logging.getLogger(__name__)

ContainerKey = tuple[str, str, str]  # namespace, pod name, container name


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AllocatedDevices:
    resource: str  # amd.com/gpu, nvidia.com/gpu, rdma/hca_shared_devices_a, ...
    ids: tuple[str, ...]


def device_id(plugin_id: str) -> str:
    """The device behind a plugin's id: a shared device's replica suffix removed, lower case."""
    return plugin_id.split("::", 1)[0].strip().lower()


def allocated_devices(
    allocations: Sequence[AllocatedDevices], by_id: Mapping[str, KnownDevice]
) -> list[KnownDevice]:
    """The known devices behind allocated ids (ids of devices not known here name none)."""
    found = (by_id.get(device_id(i)) for a in allocations for i in a.ids)
    return [device for device in found if device is not None]


def parse_list(
    reply: api_pb2.ListPodResourcesResponse,
) -> dict[ContainerKey, tuple[AllocatedDevices, ...]]:
    """Every container's device-plugin allocations; containers given none are left out."""
    allocations: dict[ContainerKey, tuple[AllocatedDevices, ...]] = {}
    for pod in reply.pod_resources:
        for container in pod.containers:
            devices = tuple(
                AllocatedDevices(resource=d.resource_name, ids=tuple(d.device_ids))
                for d in container.devices
                if d.device_ids
            )
            if devices:
                allocations[(pod.namespace, pod.name, container.name)] = devices
    return allocations


class PodResourcesClient:
    """The kubelet's v1.PodResourcesLister on its unix socket."""

    def __init__(self, socket: str, *, timeout_seconds: float) -> None:
        self.socket = socket
        self._channel = grpc.insecure_channel(f"unix://{socket}")
        self._stub = api_pb2_grpc.PodResourcesListerStub(self._channel)  # type: ignore[no-untyped-call]
        self._timeout = timeout_seconds

    def list(self) -> dict[ContainerKey, tuple[AllocatedDevices, ...]]:
        """SourceError when the kubelet does not answer."""
        try:
            reply = self._stub.List(api_pb2.ListPodResourcesRequest(), timeout=self._timeout)
        except grpc.RpcError as exc:
            raise errors.SourceError(
                f"kubelet pod-resources List at {self.socket}: {exc.code().name}: {exc.details()}"
            ) from exc
        return parse_list(reply)

    def close(self) -> None:
        self._channel.close()


class Allocations:
    """The last allocations read, re-read on `refresh()` and when asked about a container they
    lack (a new pod), at most every `min_interval` seconds. Failures keep the last good read."""

    def __init__(
        self,
        read: Callable[[], dict[ContainerKey, tuple[AllocatedDevices, ...]]],
        *,
        min_interval: float = 1.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read = read
        self._min_interval = min_interval
        self._monotonic = monotonic
        self._allocations: dict[ContainerKey, tuple[AllocatedDevices, ...]] = {}
        self._read_at: float | None = None
        self._failing = False
        self._lock = threading.Lock()

    def refresh(self) -> None:
        with self._lock:
            self._refresh()

    def of(self, pod: Pod, container: str) -> tuple[AllocatedDevices, ...]:
        """What the kubelet allocated to `container` of `pod` (empty: nothing, or unknown)."""
        key = (pod.namespace, pod.name, container)
        with self._lock:
            found = self._allocations.get(key)
            stale = self._read_at is None or self._monotonic() - self._read_at >= self._min_interval
            if found is None and stale:
                self._refresh()
                found = self._allocations.get(key)
            return found or ()

    def _refresh(self) -> None:
        self._read_at = self._monotonic()
        try:
            self._allocations = self._read()
        except errors.SourceError as exc:
            if not self._failing:
                log.warning(
                    "kubelet pod-resources unreadable; devices from container specs only",
                    extra={"reason": str(exc)},
                )
            self._failing = True
            return
        if self._failing:
            log.info("kubelet pod-resources readable again")
        self._failing = False
