from __future__ import annotations

from lens.containers.model import Source
from lens.containers.node import runtimes
from lens.containers.node.containerd import ContainerdClient
from lens.containers.node.docker import DockerClient
from lens.runtime.config import ContainersConfig


def test_the_configured_runtimes_containerd_first() -> None:
    cfg = ContainersConfig(
        containerd_address="/run/containerd.sock",
        docker_address="unix:///run/docker.sock",
        request_timeout_seconds=3,
    )
    clients = runtimes.runtime_clients(cfg, host_root="/host")
    try:
        assert [source for source, _ in clients] == [Source.CONTAINERD, Source.DOCKER]
        containerd, docker = clients[0][1], clients[1][1]
        assert isinstance(containerd, ContainerdClient) and isinstance(docker, DockerClient)
        assert containerd.address == "/run/containerd.sock"
        assert docker.address == "/run/docker.sock"
    finally:
        for _, client in clients:
            client.close()


def test_no_address_no_client() -> None:
    cfg = ContainersConfig(containerd_address="", docker_address="", pod_resources_socket="")
    assert runtimes.runtime_clients(cfg, host_root="/") == []
    assert runtimes.pod_resources_client(cfg) is None
    given = runtimes.pod_resources_client(ContainersConfig(pod_resources_socket="/none.sock"))
    assert given is not None
    given.close()
