"""`lens netflow` with netflow.cluster_networks against the API emulator, recorded: the nodes'
podCIDRs and kubeadm's ConfigMap read (the emulator serves no ServiceCIDR objects)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lens.roles.netflow import main as netflow_main
from lens.runtime.config import Config, NetflowConfig
from tests.deploy.roleruns import (
    LOOPBACK,
    Recorded,
    Running,
    emulator,
    kubeconfig_of,
    process_of,
    wait_for,
)

KUBEADM = "networking:\n  podSubnet: 10.244.0.0/16\n  serviceSubnet: 10.96.0.0/12\n"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NetflowRun:
    recorded: Recorded


def run(directory: Path) -> NetflowRun:
    with emulator() as kube:
        kube.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1"},
                     "spec": {"podCIDRs": ["10.244.1.0/24"]}})  # fmt: skip
        kube.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "kubeadm-config", "namespace": "kube-system"},
                "data": {"ClusterConfiguration": KUBEADM},
            }
        )
        config = Config(
            server=LOOPBACK,
            kube=kubeconfig_of(kube, directory, "home"),
            netflow=NetflowConfig(cluster_networks=True, backend="sockdiag"),
        )
        kube.clear_recorded()
        built = netflow_main.build(config, process_of("netflow"))
        running = Running(built.process)
        try:
            wait_for(
                "the cluster's networks read",
                lambda: any(r.resource == "configmaps" for r in kube.recorded()),
            )
        finally:
            running.stop()
        return NetflowRun(recorded=Recorded(home=kube.recorded()))
