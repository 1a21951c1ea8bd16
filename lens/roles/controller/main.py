"""`lens controller`: wires the clusters' watches, leader election, /metrics and health.

`build()` assembles the role (tests start it against the API emulator and a test database);
`run()` is what the CLI calls.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import logging
import socket

import kubernetes
import peewee

from lens.kube import clients
from lens.kube.clustersync import ClusterSync
from lens.kube.kubelettargets import KubeletTargets
from lens.kube.leader import LeaderElector, LeaseSettings
from lens.kube.reflector import WatchSettings
from lens.kube.syncmetrics import LEADER_GAUGE, SyncMetrics
from lens.roles.controller.clusters import ClusterSecret
from lens.roles.controller.fleet import ClusterTarget, Fleet
from lens.runtime import kit, settings
from lens.runtime.clock import Clock
from lens.runtime.config import Config
from lens.runtime.kubesections import KubeConfig
from lens.runtime.periodic import Loop
from lens.store import database, migrating

log = logging.getLogger(__name__)


def watch_settings(kube: KubeConfig) -> WatchSettings:
    return WatchSettings(
        page_size=kube.page_size,
        watch_timeout_seconds=kube.watch_timeout_seconds,
        stall_seconds=kube.stall_seconds,
        connect_timeout_seconds=min(10.0, kube.request_timeout_seconds),
    )


class Watching:
    """The role's part: the fleet, led by the elector (or at once without election)."""

    name = "watching"

    def __init__(self, fleet: Fleet, elector: LeaderElector | None) -> None:
        self.fleet = fleet
        self.elector = elector

    async def start(self) -> None:
        self.fleet.start()
        if self.elector is None:
            self.fleet.lead()
        else:
            self.elector.start()

    async def stop(self) -> None:
        def stop() -> None:
            self.fleet.follow()
            self.fleet.close()  # returns once every writer has stopped
            if self.elector is not None:
                self.elector.stop()  # then hands the lease over

        await asyncio.to_thread(stop)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Controller:
    kit: kit.RoleKit
    fleet: Fleet
    elector: LeaderElector | None
    db: peewee.Database


def build(
    config: Config,
    *,
    clock: Clock | None = None,
    handle_signals: bool = True,
    api: kubernetes.client.ApiClient | None = None,
) -> Controller:
    """The assembled role: database opened (and migrated), nothing started."""
    role = kit.build(
        "controller",
        server=config.server,
        service=config.service,
        clock=clock,
        handle_signals=handle_signals,
    )
    api = api or clients.connect(config.kube)
    db = migrating.open_for_role(config.database)
    metrics = SyncMetrics(role.metrics)
    watch = watch_settings(config.kube)

    def wall_time() -> datetime.datetime:
        return datetime.datetime.fromtimestamp(role.clock.time(), datetime.UTC)

    def make_sync(cluster: str, cluster_api: kubernetes.client.ApiClient) -> ClusterSync:
        return ClusterSync(
            cluster_api,
            db,
            cluster=cluster,
            config=config.controller,
            watch=watch,
            metrics=metrics,
            wall_time=wall_time,
        )

    fleet = Fleet(make_sync)
    home = ClusterTarget(config.cluster.name, api)
    fleet.set_targets([home])
    for loop in _loops(config, api, home, fleet):
        role.loops.add(loop)
    elector = _elector(config, api, fleet) if config.controller.leader_election else None
    leader = role.metrics.gauge(*LEADER_GAUGE)
    leader.set_function(lambda: 1.0 if fleet.leading else 0.0)
    role.service.add(Watching(fleet, elector))
    role.health.add_readiness("database", lambda: database.ping(db))
    role.health.add_readiness("watches", lambda: _listed(fleet))
    return Controller(kit=role, fleet=fleet, elector=elector, db=db)


def _loops(
    config: Config, api: kubernetes.client.ApiClient, home: ClusterTarget, fleet: Fleet
) -> list[Loop]:
    """The clusters Secret read again, and the kubelet targets kept, when configured."""
    loops = []
    controller = config.controller
    if controller.clusters_secret:
        secret = ClusterSecret(api, secret=controller.clusters_secret, home=home, fleet=fleet)
        loops.append(
            Loop(
                name="clusters",
                interval_seconds=controller.clusters_refresh_seconds,
                run=secret.refresh,
            )
        )
    if controller.kubelet_service:
        loops.append(
            Loop(
                name="kubelet-targets",
                interval_seconds=controller.kubelet_service_interval_seconds,
                run=lambda: reconcile_kubelet_targets(fleet, controller.kubelet_service),
            )
        )
    return loops


def _elector(config: Config, api: kubernetes.client.ApiClient, fleet: Fleet) -> LeaderElector:
    namespace, name = config.controller.lease.split("/")
    identity = config.controller.identity or socket.gethostname()
    lease = LeaseSettings(
        namespace=namespace,
        name=name,
        identity=identity,
        lease_duration=config.controller.lease_duration_seconds,
    )
    return LeaderElector(api, lease, on_started=fleet.lead, on_stopped=fleet.follow)


def reconcile_kubelet_targets(fleet: Fleet, service: str) -> None:
    """Each led cluster's kubelet Service and EndpointSlices, from its node cache."""
    namespace, name = service.split("/")
    for sync in fleet.syncs():
        if sync.nodes.synced:
            targets = KubeletTargets(sync.cluster_api, namespace=namespace, name=name)
            targets.reconcile(sync.nodes.cache.objects())


def _listed(fleet: Fleet) -> None:
    if not fleet.listed():
        raise RuntimeError("the watches have not listed every cluster yet")


def run(config: Config) -> int:
    """`lens controller`: run until SIGTERM; the exit code of the service."""
    controller = build(config)
    log.info(
        "controller starting",
        extra={
            "config": {
                section: settings.to_plain(getattr(config, section))
                for section in ("cluster", "server", "kube", "controller")
            }
        },
    )
    return controller.kit.service.run()
