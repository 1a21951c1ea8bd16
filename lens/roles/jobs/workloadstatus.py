"""`lens jobs`' workload status and pod liveness: GPU pods deleted while no controller watched
are closed, their phases persisted, and workloads with no live pod left ended — from the pod
cache and the controller's rows (lens/kube/cluster/liveness.py), on the leader."""

from __future__ import annotations

import datetime
from collections.abc import Callable

import peewee

from lens.kube.cluster.caches import ClusterCaches
from lens.kube.cluster.liveness import Liveness, Settled
from lens.kube.kubelet import nodes
from lens.kube.workloads.podrecording import GpuPodRecorder
from lens.roles.jobs.leading import add_leader_loop
from lens.runtime.clock import Clock
from lens.runtime.config import Config
from lens.runtime.process import Process

# A pod the controller stored this long ago is in any watch cache that is not stalled.
POD_GRACE = datetime.timedelta(minutes=2)


class WorkloadStatus:
    """The loop's body; `last` is what its last run settled."""

    def __init__(
        self, config: Config, caches: ClusterCaches, *, db: peewee.Database, clock: Clock
    ) -> None:
        self._caches = caches
        self._clock = clock
        self._model_labels = config.controller.gpu_model_labels
        self._models: dict[str, str] = {}  # node name -> GPU model, read again each run
        recorder = GpuPodRecorder(
            db,
            cluster=config.cluster.name,
            resources=config.controller.gpu_resources,
            snapshot_history=config.controller.snapshot_history,
            gpu_model=lambda node: self._models.get(node, ""),
            wall_time=self._now,
        )
        self._liveness = Liveness(
            db,
            cluster=config.cluster.name,
            recorder=recorder,
            grace=POD_GRACE,
            wall_time=self._now,
        )
        self.last = Settled(pods_closed=0, phases_persisted=0, workloads_ended=0)

    def _now(self) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self._clock.time(), datetime.UTC)

    def run(self) -> None:
        if not self._caches.synced():
            return
        self._models = {
            nodes.name_of(node): nodes.gpu_model(node, self._model_labels)
            for node in self._caches.nodes.cache.objects()
        }
        self.last = self._liveness.settle(self._caches.pods.cache.get)


def add(
    config: Config,
    process: Process,
    caches: ClusterCaches,
    db: peewee.Database,
    *,
    leading: Callable[[], bool],
) -> WorkloadStatus:
    body = WorkloadStatus(config, caches, db=db, clock=process.clock)
    add_leader_loop(
        process,
        name="workload-status",
        interval_seconds=config.jobs.workload_status_interval_seconds,
        run=body.run,
        leading=leading,
    )
    return body
