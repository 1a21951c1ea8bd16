"""`lens jobs`' node info: every GPU node's row in `nodes` — its facts from the node cache, its
allocation, the mean utilization of its GPUs in the last settled minute and the driver version
of the agent's inventory — written only when something changed (REFERENCE.md 5.3)."""

from __future__ import annotations

import datetime
from collections.abc import Callable

import peewee

from lens.kube.cluster.caches import ClusterCaches
from lens.kube.cluster.noderows import NodeRows, node_row
from lens.roles.jobs.allocation import cluster_allocation, node_facts
from lens.roles.jobs.leading import add_leader_loop
from lens.runtime.clock import Clock
from lens.runtime.config import Config
from lens.runtime.process import Process
from lens.store import database, freshness
from lens.usage import nodes

# A minute's reports are all in two minutes after it ended (the idle GPUs job waits as long).
SETTLE = datetime.timedelta(minutes=2)


class NodeInfo:
    """The loop's body; `last_written` is how many rows its last run wrote."""

    def __init__(
        self, config: Config, caches: ClusterCaches, *, db: peewee.Database, clock: Clock
    ) -> None:
        self._config = config
        self._caches = caches
        self._db = db
        self._clock = clock
        self._rows = NodeRows(db, cluster=config.cluster.name, wall_time=self._now)
        self.last_written = 0

    def _now(self) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self._clock.time(), datetime.UTC)

    def run(self) -> None:
        if not self._caches.synced():
            return
        facts = node_facts(self._config, self._caches)
        allocated = {
            n.node: n.allocated for n in cluster_allocation(self._config, self._caches, facts).nodes
        }
        now = self._now()
        minute = (now - SETTLE).replace(second=0, microsecond=0)
        cluster = self._config.cluster.name
        with database.session(self._db):
            busy = nodes.utilization_percent(cluster, minute)
            drivers = nodes.driver_versions(cluster)
            named = nodes.gpu_models(cluster)
        rows = [
            node_row(
                f,
                allocated=allocated.get(f.name, 0),
                utilization_percent=busy.get(f.name),
                driver_version=drivers.get(f.name, ""),
                gpu_model=named.get(f.name, ""),
            )
            for f in facts
        ]
        self.last_written = self._rows.write(rows)
        freshness.record(
            self._db,
            cluster=cluster,
            figure=freshness.NODES,
            as_of=now,
            interval_seconds=self._config.jobs.node_info_interval_seconds,
        )


def add(
    config: Config,
    process: Process,
    caches: ClusterCaches,
    db: peewee.Database,
    *,
    leading: Callable[[], bool],
) -> NodeInfo:
    body = NodeInfo(config, caches, db=db, clock=process.clock)
    add_leader_loop(
        process,
        name="node-info",
        interval_seconds=config.jobs.node_info_interval_seconds,
        run=body.run,
        leading=leading,
    )
    return body
