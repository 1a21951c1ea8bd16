"""The node agent's container tracking: runtime watchers and the device table they attribute with.

Joins two domains as STYLE S2.2 asks: the devices domain's collections (GPUs, DRI, RDMA, kept in
AgentState) become the device-number lookup the containers domain attributes with. Started
after the first collection cycle, so containers already running are attributed to real GPUs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from lens.containers.model import Container, Pod, Record, Source
from lens.containers.node import runtimes
from lens.containers.node.attribution import KnownDevice
from lens.containers.node.containerd import ContainerdClient
from lens.containers.node.docker import DockerClient
from lens.containers.node.podresources import (
    AllocatedDevices,
    Allocations,
    allocated_devices,
)
from lens.containers.node.tracking import ContainerTracker
from lens.containers.node.watching import ContainerWatcher, WatcherMetrics
from lens.devices import devnodes
from lens.devices.sysfs import HostFiles
from lens.roles.node_agent.state import AgentState
from lens.runtime import errors, lifecycle
from lens.runtime.config import ContainersConfig
from lens.runtime.selfmetrics import SelfMetrics

log = logging.getLogger(__name__)

_RUNTIME_NAMES = {Source.CONTAINERD: "containerd", Source.DOCKER: "docker"}
# How long container tracking waits for the first collection cycle, which knows the node's
# devices, before it follows the runtimes anyway.
DEVICES_WAIT_SECONDS = 30.0


class DeviceTable:
    """(major, minor) → GPU or RDMA device, rebuilt when the agent's collections change."""

    def __init__(self, host: HostFiles, state: AgentState) -> None:
        self._host = host
        self._state = state
        self._basis: tuple[object, ...] | None = None
        self._index = devnodes.DeviceIndex(by_number={}, by_allocation_id={})

    def lookup(self, major: int, minor: int) -> KnownDevice | None:
        return self._current().by_number.get((major, minor))

    def allocated(self, allocations: Sequence[AllocatedDevices]) -> list[KnownDevice]:
        """The GPUs behind a container's device-plugin allocations (ids of other devices, and
        of GPUs not known here, such as partitions, name none)."""
        return allocated_devices(allocations, self._current().by_allocation_id)

    def _current(self) -> devnodes.DeviceIndex:
        gpus = [latest.get() for latest in self._state.gpus.values()]
        dri, rdma = self._state.dri.get(), self._state.rdma.get()
        basis = (*(g.value if g else None for g in gpus), dri and dri.value, rdma and rdma.value)
        if self._basis is None or any(a is not b for a, b in zip(basis, self._basis, strict=True)):
            self._index = devnodes.index_devices(
                self._host,
                gpus=[gpu for gpu, _ in self._state.known_gpus()],
                dri=dri.value if dri else None,
                rdma=rdma.value if rdma else None,
            )
            self._basis = basis
        return self._index


class ContainerTracking:
    """A service part: follows containerd (and Docker) while the agent runs, putting container
    events in the agent's event stream (`emit`)."""

    name = "containers"

    def __init__(
        self,
        *,
        containers: ContainersConfig,
        emit: Callable[[Record], None],
        host_root: str,
        lookup: DeviceTable,
        metrics: SelfMetrics,
        fail: Callable[[BaseException], None],
        wall_time: Callable[[], float] = time.time,
    ) -> None:
        self._fail = fail
        # Set when the agent's devices are known (devices_known()) or on stop: what the starter
        # thread waits for before following the runtimes.
        self._proceed = threading.Event()
        self._stopping = False
        self._lock = threading.Lock()
        self._starter: threading.Thread | None = None
        watched = WatcherMetrics(metrics)
        self.pod_resources = runtimes.pod_resources_client(containers)
        self.allocations = (
            Allocations(self.pod_resources.list) if self.pod_resources is not None else None
        )
        self._watchers = [
            _watcher(
                source,
                client,
                containers=containers,
                emit=emit,
                lookup=lookup,
                allocated=self._allocated(lookup),
                wall_time=wall_time,
                metrics=watched,
            )
            for source, client in runtimes.runtime_clients(containers, host_root=host_root)
        ]

    def _allocated(self, lookup: DeviceTable) -> Callable[[Pod, str], list[KnownDevice]] | None:
        allocations = self.allocations
        if allocations is None:
            return None
        return lambda pod, container: lookup.allocated(allocations.of(pod, container))

    def containers(self) -> list[Container]:
        """The live containers of every runtime followed, in creation order."""
        found = [c for watcher in self._watchers for c in watcher.tracker.containers()]
        return sorted(found, key=lambda c: (c.created_at, c.id))

    def reconcile(self) -> None:
        """Re-read the kubelet's allocations, then list every runtime's containers again."""
        if self.allocations is not None:
            self.allocations.refresh()
        for watcher in self._watchers:
            watcher.reconcile()

    def check_subscribed(self) -> None:
        """Readiness: following every runtime's events (NoDataError until its first resync, and
        while a watcher starts over after a failure, which the detail names)."""
        behind = [
            f"{_RUNTIME_NAMES[w.tracker.source]} at {w.client.address}"
            + (f" ({w.failure})" if w.failure else "")
            for w in self._watchers
            if not w.connected
        ]
        if behind:
            raise errors.NoDataError(f"not subscribed to {', '.join(behind)}")

    def devices_known(self) -> None:
        """The agent's first collection cycle is done: containers can be attributed now."""
        self._proceed.set()

    async def start(self) -> None:
        """Follow the runtimes once the devices are known (at most 30 s from now), on a thread
        of its own, so that a stop meanwhile is prompt."""
        self._starter = threading.Thread(target=self._follow, name="containers-start", daemon=True)
        self._starter.start()

    async def stop(self) -> None:
        await lifecycle.in_thread(self._stop, name="containers-stop")

    def _follow(self) -> None:
        if not self._proceed.wait(DEVICES_WAIT_SECONDS):
            log.warning(
                "following containers before the first collection cycle finished",
                extra={"waited_seconds": DEVICES_WAIT_SECONDS},
            )
        with self._lock:
            if self._stopping:
                return
            try:
                for watcher in self._watchers:
                    watcher.start()
            except Exception as exc:  # the part failed to start: the process stops, naming it
                log.error("container tracking failed to start", exc_info=True)
                self._fail(exc)

    def _stop(self) -> None:
        with self._lock:
            self._stopping = True
        self._proceed.set()
        if self._starter is not None:
            self._starter.join()
        for watcher in self._watchers:
            watcher.stop()
        for watcher in self._watchers:
            watcher.client.close()
        if self.pod_resources is not None:
            self.pod_resources.close()


def _watcher(
    source: Source,
    client: ContainerdClient | DockerClient,
    *,
    containers: ContainersConfig,
    emit: Callable[[Record], None],
    lookup: DeviceTable,
    allocated: Callable[[Pod, str], list[KnownDevice]] | None,
    wall_time: Callable[[], float],
    metrics: WatcherMetrics,
) -> ContainerWatcher:
    tracker = ContainerTracker(
        source=source,
        lookup=lookup.lookup,
        emit=emit,
        all_containers=containers.all_containers,
        allocated=allocated,
    )
    return ContainerWatcher(client=client, tracker=tracker, wall_time=wall_time, metrics=metrics)
