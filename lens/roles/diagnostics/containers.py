"""`lens containers`: this node's live containers with their pods, GPUs and RDMA devices.

Reads containerd directly (and Docker Engine when containers.docker_address is set; no agent, no
database) with the clients the node agent builds (containers/node/runtimes.py) and attributes
devices the way it does: the device numbers of the host's GPUs and RDMA devices from sysfs
(devnodes.index_devices), matched against each container's OCI spec by the agent's tracker.
`--json` prints the agent's /v1/pods array.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from lens.containers.model import Container, Pod, Source
from lens.containers.node import listing, runtimes
from lens.containers.node.attribution import KnownDevice
from lens.containers.node.podresources import Allocations, PodResourcesClient, allocated_devices
from lens.containers.node.tracking import ContainerTracker
from lens.devices import devnodes
from lens.devices.sources import node_sources
from lens.devices.sysfs import HostFiles
from lens.roles.diagnostics import showing
from lens.roles.diagnostics.gpus import GpuReader
from lens.roles.diagnostics.rdma import RdmaReader
from lens.runtime import errors
from lens.runtime.config import ContainersConfig, HostConfig


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ContainersReport:
    containers: tuple[Container, ...]  # containerd's, then Docker's
    sources: dict[str, Source]  # each container's runtime, by container id
    addresses: dict[Source, str]  # the runtimes read
    problems: tuple[str, ...]
    read_at: float


class ContainersReader:
    """Lists containerd's (and Docker's) containers and attributes their devices, on every read."""

    def __init__(self, host: HostConfig, containers: ContainersConfig) -> None:
        self._host = host
        self._containers = containers
        self._readers: tuple[GpuReader, RdmaReader] | None = None

    def read(self) -> ContainersReport:
        """The live containers; SourceError when containerd cannot be reached (Docker that
        cannot is a problem in the report)."""
        problems: list[str] = []
        found: list[devnodes.DeviceIndex] = []

        def host_devices() -> devnodes.DeviceIndex:
            if not found:  # only once a runtime answered with a container to attribute
                found.append(self._host_devices(problems))
            return found[0]

        socket = self._containers.pod_resources_socket
        kubelet = (
            runtimes.pod_resources_client(self._containers)
            if socket and Path(socket).exists()
            else None
        )
        allocated = None if kubelet is None else _allocated(kubelet, host_devices)
        listed: list[tuple[Source, Container]] = []
        clients = runtimes.runtime_clients(self._containers, host_root=self._host.root)
        configured = {
            Source.CONTAINERD: self._containers.containerd_address,
            Source.DOCKER: self._containers.docker_address,
        }
        addresses = {source: configured[source] for source, _ in clients}
        try:
            for source, client in clients:
                try:
                    listed += self._list(source, client, host_devices, allocated)
                except errors.SourceError as exc:
                    if source is Source.CONTAINERD:
                        raise
                    problems.append(f"Docker unreachable: {exc}")
        finally:
            for _, client in clients:
                client.close()
            if kubelet is not None:
                kubelet.close()
        return ContainersReport(
            containers=tuple(c for _, c in listed),
            sources={c.id: source for source, c in listed},
            addresses=addresses,
            problems=tuple(problems),
            read_at=time.time(),
        )

    def _list(
        self,
        source: Source,
        client: runtimes.RuntimeClient,
        host_devices: Callable[[], devnodes.DeviceIndex],
        allocated: Callable[[Pod, str], list[KnownDevice]] | None,
    ) -> list[tuple[Source, Container]]:
        tracker = ContainerTracker(
            source=source,
            lookup=lambda major, minor: host_devices().by_number.get((major, minor)),
            emit=lambda _: None,  # a one-off listing: events go nowhere
            all_containers=self._containers.all_containers,
            allocated=allocated,
        )
        tracker.resync(client, now=time.time())
        return [(source, c) for c in tracker.containers()]

    def _host_devices(self, problems: list[str]) -> devnodes.DeviceIndex:
        if self._readers is None:  # made on first need: GpuReader runs amd-smi once
            sources = node_sources(self._host, wall_time=time.time)
            self._readers = (GpuReader(sources), RdmaReader(sources))
        gpu_reader, rdma_reader = self._readers
        gpus, rdma = gpu_reader.read(), rdma_reader.read()
        problems.extend([*gpus.problems, *rdma.problems])
        index = devnodes.index_devices(
            HostFiles(self._host.root), gpus=gpus.gpus, dri=gpus.dri, rdma=rdma.snapshot
        )
        if not index.by_number:
            problems.append("no GPU or RDMA device numbers found: no devices can be attributed")
        return index


def _allocated(
    kubelet: PodResourcesClient, host_devices: Callable[[], devnodes.DeviceIndex]
) -> Callable[[Pod, str], list[KnownDevice]]:
    """The GPUs the kubelet allocated to a container, read once for the whole listing."""
    allocations = Allocations(kubelet.list, min_interval=float("inf"))
    return lambda pod, name: allocated_devices(
        allocations.of(pod, name), host_devices().by_allocation_id
    )


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    if seconds < 172800:
        return f"{seconds / 3600:.0f}h"
    return f"{seconds / 86400:.0f}d"


_RUNTIME_NAMES = {Source.CONTAINERD: "containerd", Source.DOCKER: "Docker"}


def _row(container: Container, now: float) -> list[str]:
    pod = container.pod
    gpus = [str(d.number) for d in container.devices if d.type == "gpu"]
    rdma = [d.name for d in container.devices if d.type == "ib"]
    status = container.status
    if container.exit_code is not None:
        status = f"{status} ({container.exit_code})"
    return [
        container.id[:13],
        f"{pod.namespace}/{pod.name}" if pod else "-",
        container.name,
        status,
        ",".join(gpus) or "-",
        ",".join(rdma) or "-",
        _age(max(0.0, now - container.created_at)),
    ]


def table(report: ContainersReport) -> Group:
    runtimes = len(report.addresses) > 1
    grid = Table(
        box=box.SIMPLE_HEAD,
        title=f"{len(report.containers)} containers",
        caption=" · ".join(
            f"{_RUNTIME_NAMES[source]} at {address}" for source, address in report.addresses.items()
        ),
        caption_justify="left",
    )
    for name in ("Container", "Pod", "Name", "Status", "GPUs", "RDMA", "Age"):
        grid.add_column(name, justify="right" if name == "Age" else "left")
    if runtimes:
        grid.add_column("Runtime")
    for container in report.containers:
        runtime = [_RUNTIME_NAMES[report.sources[container.id]]] if runtimes else []
        grid.add_row(*_row(container, report.read_at), *runtime)
    return Group(grid, *(Text(f"! {problem}", style="yellow") for problem in report.problems))


def to_json(report: ContainersReport) -> list[listing.JsonObject]:
    return listing.containers_json(report.containers)


def diagnostic(
    host: HostConfig, containers: ContainersConfig
) -> showing.Diagnostic[ContainersReport]:
    """`lens containers` for the host seen at `host.root`, the containerd at
    `containers.containerd_address` and, when set, the Docker Engine at `docker_address`."""
    if not containers.containerd_address:
        raise errors.ConfigError(
            source="config",
            key="containers.containerd_address",
            expected="the path of containerd's socket",
        )
    reader = ContainersReader(host, containers)
    return showing.Diagnostic(read=reader.read, table=table, to_json=to_json, empty=lambda _: False)
