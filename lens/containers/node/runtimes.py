"""The clients of a node's container runtimes and kubelet pod-resources, from the `containers`
config: built here for the node agent's tracking and for `lens containers` alike."""

from __future__ import annotations

from lens.containers.model import Source
from lens.containers.node.containerd import ContainerdClient
from lens.containers.node.docker import DockerClient
from lens.containers.node.podresources import PodResourcesClient
from lens.runtime.config import ContainersConfig

RuntimeClient = ContainerdClient | DockerClient


def runtime_clients(cfg: ContainersConfig, *, host_root: str) -> list[tuple[Source, RuntimeClient]]:
    """containerd's and Docker's clients, for those configured (containerd first)."""
    clients: list[tuple[Source, RuntimeClient]] = []
    timeout = cfg.request_timeout_seconds
    if cfg.containerd_address:
        containerd = ContainerdClient(
            cfg.containerd_address, namespace=cfg.namespace, timeout_seconds=timeout
        )
        clients.append((Source.CONTAINERD, containerd))
    if cfg.docker_address:
        docker = DockerClient(cfg.docker_address, host_root=host_root, timeout_seconds=timeout)
        clients.append((Source.DOCKER, docker))
    return clients


def pod_resources_client(cfg: ContainersConfig) -> PodResourcesClient | None:
    """The kubelet's pod-resources client, when its socket is configured."""
    if not cfg.pod_resources_socket:
        return None
    return PodResourcesClient(cfg.pod_resources_socket, timeout_seconds=cfg.request_timeout_seconds)
