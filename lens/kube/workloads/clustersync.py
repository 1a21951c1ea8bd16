"""One cluster's GPU pods and workloads, from watches into the store.

Reflectors for nodes (GPU model labels), pods, and each owner kind a GPU pod's chain reaches
feed one ChangeBatcher; its writer commits each batch: pods first, then the pods a listing
showed deleted unseen, then every workload the batch touched (recomputed from the caches),
then the open workloads a kind's listing lacks. After a commit the finalizer keeper learns
which final states are stored.
"""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable

import kubernetes
import peewee

from lens.kube.kubelet import nodes
from lens.kube.machinery import resources
from lens.kube.machinery.batching import Batch, ChangeBatcher
from lens.kube.machinery.cache import Change, ChangeType, JsonObject, ObjectCache, uid_of
from lens.kube.machinery.reflector import Reflector, WatchSettings
from lens.kube.machinery.resources import Kind
from lens.kube.workloads import gpupods
from lens.kube.workloads import rows as workloads
from lens.kube.workloads.finalizers import FinalizerKeeper
from lens.kube.workloads.owners import OwnerTree
from lens.kube.workloads.podrecording import GpuPodRecorder
from lens.kube.workloads.syncmetrics import SyncMetrics
from lens.kube.workloads.workloadrecording import WorkloadRecorder, WorkloadWrite
from lens.runtime.config import ControllerConfig


class ClusterSync:
    def __init__(
        self,
        api: kubernetes.client.ApiClient,
        db: peewee.Database,
        *,
        cluster: str,
        config: ControllerConfig,
        watch: WatchSettings,
        metrics: SyncMetrics,
        wall_time: Callable[[], datetime.datetime],
        on_commit: Callable[[Batch], None] | None = None,
    ) -> None:
        """`on_commit` sees every batch once it is committed (benchmarks time it)."""
        self.cluster = cluster
        self._on_commit = on_commit
        self.cluster_api = api
        self._config = config
        self._metrics = metrics
        self._now = wall_time
        self._models: dict[str, str] = {}
        self._tracked: set[str] = set()
        self._digests: dict[str, str] = {}
        self._lock = threading.Lock()
        self.batcher = ChangeBatcher(
            self._write,
            max_changes=config.batch_changes,
            max_pending=config.pending_changes,
            on_failure=lambda exc: metrics.write_errors.labels(cluster).inc(),
        )
        self.nodes = Reflector(
            name="nodes",
            list_func=resources.Lister(api, resources.NODES.collection_path()),
            cache=ObjectCache(),
            handle=self._nodes_changed,
            settings=watch,
        )
        self.pods = Reflector(
            name="pods",
            list_func=resources.Lister(api, resources.PODS.collection_path()),
            cache=ObjectCache(),
            handle=self.batcher.add_pods,
            settings=watch,
            on_listed=self.batcher.pods_listed,
        )
        self.tree = OwnerTree(
            api,
            pods=self.pods.cache,
            settings=watch,
            handle=self._workloads_changed,
            on_listed=self.batcher.kind_listed,
        )
        self.pod_recorder = GpuPodRecorder(
            db,
            cluster=cluster,
            resources=config.gpu_resources,
            snapshot_history=config.snapshot_history,
            gpu_model=self.gpu_model,
            wall_time=wall_time,
        )
        self.workload_recorder = WorkloadRecorder(
            db, cluster=cluster, snapshot_history=config.snapshot_history, wall_time=wall_time
        )
        self.finalizers = self._keeper(api, config, metrics) if config.finalizer_kinds else None

    def _keeper(
        self, api: kubernetes.client.ApiClient, config: ControllerConfig, metrics: SyncMetrics
    ) -> FinalizerKeeper:
        return FinalizerKeeper(
            api,
            kinds=config.finalizer_kinds,
            grace_seconds=config.finalizer_grace_seconds,
            lookup=self._cached,
            kind_of=self.tree.kind_of,
            on_released=metrics.finalizers_released.labels(self.cluster).inc,
            on_forced=metrics.finalizers_forced.labels(self.cluster).inc,
        )

    # -- lifecycle ----------------------------------------------------------------------

    def start(self, *, list_timeout: float = 60.0) -> None:
        """Nodes first (pods' GPU models come from them), then pods, then the owner kinds of
        the workloads stored as open: a workload is only judged with its pods in the cache."""
        stored = self.workload_recorder.open_workloads()
        self._tracked.update(s.uid for s in stored)
        self._metrics.tracked.labels(self.cluster).set(len(self._tracked))
        self.nodes.start()
        self.nodes.wait_synced(list_timeout)
        if self.finalizers is not None:
            self.finalizers.start()
        self.batcher.start()
        self.pods.start()
        self.pods.wait_synced(list_timeout)
        for kind in {(s.group_version, s.kind) for s in stored}:
            self.tree.watch(*kind)

    def stop(self) -> None:
        """The writer first: once this returns nothing more is written (a new leader may)."""
        self.batcher.stop()
        if self.finalizers is not None:
            self.finalizers.stop()
        self.pods.stop()
        self.tree.stop()
        self.nodes.stop()

    def listed(self) -> bool:
        """Every watch has listed once."""
        return self.nodes.synced and self.pods.synced and self.tree.synced()

    def watching(self) -> bool:
        """Listed, and the pods' and nodes' watch streams open: the store follows them now."""
        return self.listed() and self.pods.watching and self.nodes.watching

    def synced(self) -> bool:
        """Every watch has listed, and what arrived is committed."""
        return self.listed() and self.batcher.idle()

    def caught_up(self, version: int) -> bool:
        """Every watch has seen resourceVersion `version` (events or bookmarks) and what
        arrived is committed: the store reflects the cluster as of that version."""
        watched = [self.nodes, self.pods, *self.tree.reflectors()]
        seen = [int(r.version) if r.version.isdigit() else 0 for r in watched]
        return all(v >= version for v in seen) and self.synced()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every watch has listed and what arrived is committed (synced()).

        Writing may start watches of new owner kinds, so the watches are looked at again each
        time the writer goes idle."""
        deadline = time.monotonic() + timeout

        def left() -> float:
            return max(0.0, deadline - time.monotonic())

        while True:
            for reflector in (self.nodes, self.pods, *self.tree.reflectors()):
                if not reflector.wait_synced(left()):
                    return False
            if not self.batcher.wait_idle(left()):
                return False
            if self.synced():
                return True
            if not left():
                return False

    # -- from the reflectors ------------------------------------------------------------

    def gpu_model(self, node: str) -> str:
        with self._lock:
            return self._models.get(node, "")

    def _cached(self, kind: Kind, uid: str) -> JsonObject | None:
        cache = self.tree.cache_of(kind)
        return cache.get(uid) if cache is not None else None

    def _nodes_changed(self, changes: list[Change]) -> None:
        with self._lock:
            for change in changes:
                name = nodes.name_of(change.object)
                if change.type is ChangeType.DELETED:
                    self._models.pop(name, None)
                else:
                    self._models[name] = nodes.gpu_model(
                        change.object, self._config.gpu_model_labels
                    )

    def _workloads_changed(self, kind: Kind, changes: list[Change]) -> None:
        if self.finalizers is not None:
            self.finalizers.observe(kind, changes)
        self.batcher.add_workloads(kind, changes)

    # -- the writer ---------------------------------------------------------------------

    def _write(self, batch: Batch) -> None:
        gpu_pod_changes = self.pod_recorder.gpu_changes(batch.pods)
        self.pod_recorder.record(gpu_pod_changes)
        if batch.pods_listed:
            self.pod_recorder.close_missing({uid_of(p) for p in self.pods.cache.objects()})
        writes, digests = self._workload_writes(batch, gpu_pod_changes)
        self.workload_recorder.record(writes)
        for kind in batch.kinds_listed:
            cache = self.tree.cache_of(kind)
            listed = {uid_of(o) for o in cache.objects()} if cache is not None else set()
            closed = self.workload_recorder.close_missing(kind.api_version, kind.kind, listed)
            self._tracked.difference_update(closed)
        self._committed(batch, writes, digests)

    def _committed(
        self, batch: Batch, writes: list[WorkloadWrite], digests: dict[str, str]
    ) -> None:
        for write in writes:
            if write.state.deleted:
                self._tracked.discard(write.state.uid)
                self._digests.pop(write.state.uid, None)
            else:
                self._tracked.add(write.state.uid)
                self._digests[write.state.uid] = digests[write.state.uid]
        if self.finalizers is not None:
            self.finalizers.committed(writes)
        if self._on_commit is not None:
            self._on_commit(batch)
        done = time.monotonic()
        lag = self._metrics.lag.labels(self.cluster)
        for enqueued in batch.enqueued:
            lag.observe(max(0.0, done - enqueued))
        self._metrics.batch.labels(self.cluster).observe(len(batch))
        self._metrics.changes.labels(self.cluster, "pod").inc(len(batch.pods))
        self._metrics.changes.labels(self.cluster, "workload").inc(len(batch.workloads))
        self._metrics.tracked.labels(self.cluster).set(len(self._tracked))
        self._metrics.pending.labels(self.cluster).set(self.batcher.pending)

    def _workload_writes(
        self, batch: Batch, gpu_pod_changes: list[Change]
    ) -> tuple[list[WorkloadWrite], dict[str, str]]:
        """The workloads the batch touched, and each one's snapshot digest."""
        pods_of: dict[str, list[JsonObject]] = {}

        def gpu_pods(uid: str) -> list[JsonObject]:
            if uid not in pods_of:
                pods_of[uid] = self._gpu_pods_under(uid)
            return pods_of[uid]

        touched: dict[str, tuple[JsonObject, bool]] = {}
        for change in gpu_pod_changes:
            for owner in self.tree.ancestors(change.object):
                touched[uid_of(owner)] = (owner, False)
        for _, change in batch.workloads:
            gone = change.type is ChangeType.DELETED
            touched[uid_of(change.object)] = (change.object, gone)
            if not gone and gpu_pods(uid_of(change.object)):
                for owner in self.tree.ancestors(change.object):
                    touched.setdefault(uid_of(owner), (owner, False))
        now = self._now()
        states = []
        for uid, (obj, gone) in touched.items():
            pods = gpu_pods(uid)
            # A workload without pods in the cache is judged only once pods have listed.
            if pods or (uid in self._tracked and self.pods.synced):
                state = workloads.state(
                    obj, pods, resources=self._config.gpu_resources, gone=gone, now=now
                )
                states.append((state, obj))
        return self._with_snapshots(states)

    def _gpu_pods_under(self, uid: str) -> list[JsonObject]:
        return [p for p in self.tree.pods_under(uid) if self.pod_recorder.is_gpu_pod(p)]

    def _with_snapshots(
        self, states: list[tuple[workloads.WorkloadState, JsonObject]]
    ) -> tuple[list[WorkloadWrite], dict[str, str]]:
        unseen = [s.uid for s, _ in states if s.uid not in self._digests]
        stored = self.workload_recorder.with_snapshots(unseen) if unseen else set()
        writes, digests = [], {}
        for state, obj in states:
            digest = digests[state.uid] = gpupods.snapshot_digest(obj)
            known = self._digests.get(state.uid)
            wanted = state.uid not in stored if known is None else known != digest
            writes.append(WorkloadWrite(state=state, object=obj, snapshot=wanted))
        return writes, digests
