"""`lens netflow`: the node's TCP flows as metrics (docs/netflow.md).

`build()` adds the role to a process: the eBPF backend as a part (loaded at start), the reading
as a loop every netflow.interval_seconds, GET /v1/net-flow/tcp-listen, the readiness check.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable
from pathlib import Path

import kubernetes

from lens.kube.machinery import clients
from lens.kube.machinery.reflector import watch_settings
from lens.netflow import classify, listeners, networks
from lens.netflow.netflowmetrics import NetflowMetrics
from lens.netflow.peerpodmetrics import PeerPodMetrics
from lens.roles.netflow.clusternets import ClusterNetworkReader, ClusterNetworks
from lens.roles.netflow.cycle import NetflowCycle
from lens.roles.netflow.podwatch import PeerPodWatch
from lens.runtime.config import Config
from lens.runtime.httpserver import Request, Response, enveloped
from lens.runtime.launcher import Role
from lens.runtime.periodic import Loop
from lens.runtime.process import Process

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Netflow:
    process: Process
    cycle: NetflowCycle


def build(
    config: Config,
    process: Process,
    *,
    api: Callable[[], kubernetes.client.ApiClient] | None = None,
) -> Netflow:
    """Add the role to `process`; a bad policy file or CIDR is a ConfigError here. `api` makes
    the Kubernetes client for netflow.cluster_networks and netflow.peer_pods (default: per
    config.kube)."""
    root = Path(config.host.root)
    policy = networks.node_policy(config.netflow, root=root)
    metrics = NetflowMetrics(process.metrics, ttl_seconds=config.netflow.series_ttl_seconds)
    # One client for the watch of pods and the reading of the cluster's networks.
    make_api = functools.cache(api or (lambda: clients.connect(config.kube)))
    pods = _peer_pods(config, process, make_api=make_api) if config.netflow.peer_pods else None
    cycle = NetflowCycle(
        config.netflow,
        root=root,
        classifier=classify.Classifier(policy),
        metrics=metrics,
        clock=process.clock,
        name_peers=pods.name_peers if pods is not None else None,
    )
    process.add_part(cycle)
    process.add_loop(
        Loop(name="netflow", interval_seconds=config.netflow.interval_seconds, run=cycle.run)
    )

    def tcp_listen(_request: Request) -> Response:
        """The original's route: the listening ports, IPv6 ones included."""
        return enveloped(listeners.read_listeners(root).ports)

    process.add_route("/v1/net-flow/tcp-listen", tcp_listen)
    process.health.add_readiness("netflow", cycle.ready)
    if config.netflow.cluster_networks:
        reader = ClusterNetworkReader(make_api)
        process.add_loop(
            Loop(
                name="netflow-cluster-networks",
                interval_seconds=config.netflow.cluster_networks_refresh_seconds,
                run=functools.partial(_follow_cluster, reader, policy, cycle, {}),
            )
        )
    return Netflow(process=process, cycle=cycle)


def _peer_pods(
    config: Config, process: Process, *, make_api: Callable[[], kubernetes.client.ApiClient]
) -> PeerPodWatch:
    metrics = PeerPodMetrics(process.metrics, ttl_seconds=config.netflow.series_ttl_seconds)
    watch = PeerPodWatch(make_api(), watch=watch_settings(config.kube), metrics=metrics)
    process.add_part(watch)
    return watch


def _follow_cluster(
    reader: ClusterNetworkReader,
    policy: classify.NetworkPolicy,
    cycle: NetflowCycle,
    last: dict[str, ClusterNetworks],
) -> None:
    """The cluster's networks added to the node's policy; a new classifier when they change."""
    found = reader.read()
    if last.get("networks") == found:
        return
    last["networks"] = found
    merged = classify.with_networks(policy, k8s_pod=found.pods, k8s_svc=found.services)
    cycle.use(classify.Classifier(merged))
    log.info(
        "the cluster's networks",
        extra={"pods": [str(n) for n in found.pods], "services": [str(n) for n in found.services]},
    )


ROLE = Role(
    name="netflow",
    starting="netflow starting",
    sections=("host", "server", "netflow", "kube"),
    build=build,
)
