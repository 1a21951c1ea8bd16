"""`lens controller`: the clusters' watches into the store, under leader election.

`build()` adds the role to a process (tests start it against the API emulator and a test
database); `ROLE` is what the CLI launches.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import logging
import socket

import kubernetes
import peewee

from lens.kube.kubelet.targets import KubeletTargets
from lens.kube.machinery import clients
from lens.kube.machinery.leader import LeaderElector, LeaseSettings
from lens.kube.machinery.reflector import watch_settings
from lens.kube.workloads.clustersync import ClusterSync
from lens.kube.workloads.syncmetrics import LEADER_GAUGE, SyncMetrics
from lens.roles.controller.clusters import ClusterSecret
from lens.roles.controller.fleet import ClusterTarget, Fleet
from lens.runtime.config import Config
from lens.runtime.launcher import Role
from lens.runtime.periodic import Loop
from lens.runtime.process import Process
from lens.store import freshness, shared

log = logging.getLogger(__name__)

# How often the controller says it is watching (store/freshness.py): the API marks the pods'
# figures stale, or the controller missing, when this stops.
HEARTBEAT_SECONDS = 30.0


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
    process: Process
    fleet: Fleet
    elector: LeaderElector | None
    db: peewee.Database


def build(
    config: Config, process: Process, *, api: kubernetes.client.ApiClient | None = None
) -> Controller:
    """Add the controller to `process`: database opened (and migrated), nothing started."""
    api = api or clients.connect(config.kube)
    db = shared.shared_database(config.database, process)
    metrics = SyncMetrics(process.metrics)
    watch = watch_settings(config.kube)

    def wall_time() -> datetime.datetime:
        return datetime.datetime.fromtimestamp(process.clock.time(), datetime.UTC)

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
        process.add_loop(loop)
    process.add_loop(
        Loop(
            name="watching-heartbeat",
            interval_seconds=HEARTBEAT_SECONDS,
            run=lambda: record_watching(fleet, db, wall_time()),
        )
    )
    elector = _elector(config, api, fleet) if config.controller.leader_election else None
    leader = process.metrics.gauge(*LEADER_GAUGE)
    leader.set_function(lambda: 1.0 if fleet.leading else 0.0)
    process.add_part(Watching(fleet, elector))
    if elector is not None:
        process.health.add_readiness("leader_election", elector.check)
    process.health.add_readiness("watches", lambda: _listed(fleet))
    return Controller(process=process, fleet=fleet, elector=elector, db=db)


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
        setting="controller.lease",
    )
    return LeaderElector(api, lease, on_started=fleet.lead, on_stopped=fleet.follow)


def reconcile_kubelet_targets(fleet: Fleet, service: str) -> None:
    """Each led cluster's kubelet Service and EndpointSlices, from its node cache."""
    namespace, name = service.split("/")
    for sync in fleet.syncs():
        if sync.nodes.synced:
            targets = KubeletTargets(sync.cluster_api, namespace=namespace, name=name)
            targets.reconcile(sync.nodes.cache.objects())


def record_watching(fleet: Fleet, db: peewee.Database, now: datetime.datetime) -> None:
    """Each cluster this replica watches now is known as of `now` (a follower watches none)."""
    for sync in fleet.syncs():
        if sync.watching():
            freshness.record(
                db,
                cluster=sync.cluster,
                figure=freshness.PODS,
                as_of=now,
                interval_seconds=HEARTBEAT_SECONDS,
            )


def _listed(fleet: Fleet) -> None:
    if not fleet.listed():
        raise RuntimeError("the watches have not listed every cluster yet")


ROLE = Role(
    name="controller",
    starting="controller starting",
    sections=("cluster", "server", "kube", "controller"),
    build=build,
)
