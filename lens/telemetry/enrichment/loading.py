"""Keep the enrichment index current from the store: a complete first load, then at each refresh
only the rows changed since the previous one (reading.py), never whole tables again.

Writers stamp rows with their own clocks (the controller with Kubernetes' transition times, the
node agents with theirs), so each read goes back `overlap_seconds` before the previous one began,
and catches rows inserted since by their ids whatever their stamps; a row read twice changes
nothing the second time. The index stays bounded: ended pods keep their devices for
`ended_grace_seconds`, for late samples, then go; past `max_pods`, the longest-ended then the
longest-unchanged pods are evicted. Both are counted. The jobs role calls `refresh` from a loop.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from collections.abc import Callable, Iterable, Mapping

import peewee

from lens.store import models
from lens.store.fields import utc_now
from lens.store.queries import reading as store_reading
from lens.telemetry.enrichment import reading
from lens.telemetry.enrichment.index import (
    ContainerFacts,
    EnrichmentIndex,
    GpuFacts,
    PodFacts,
)
from lens.telemetry.enrichment.reading import Since, WorkloadRow
from lens.telemetry.enrichment.settings import EnrichmentSettings
from lens.telemetry.enrichment.shared import SharedIndex

log = logging.getLogger(__name__)

# (cluster, pod uids) -> each pod's top-level workload uid ('' none): the usage domain's
# lens.usage.workloads.top_workloads, which the role passes in (domains do not import each other).
TopWorkloads = Callable[[str, Iterable[str]], Mapping[str, str]]

_TABLES: dict[str, type[models.LensModel]] = {
    "pods": models.GpuPod,
    "containers": models.NodeContainer,
    "gpus": models.GpuDevice,
    "workloads": models.GpuWorkload,
}
_CHUNK = 500
_NEVER = datetime.datetime.max.replace(tzinfo=datetime.UTC)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RefreshStats:
    """What one refresh read and did."""

    first: bool  # the complete first load
    pods_read: int
    containers_read: int  # containers with devices
    gpus_read: int
    workloads_read: int
    pods: int  # pods indexed after it
    expired: int  # ended pods dropped after their grace
    evicted: int  # pods dropped or left out past max_pods
    generation: int


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Read:
    """Everything one refresh read, before any of it is applied."""

    pods_read: int  # pod rows, admitted or not
    pods: list[PodFacts]
    containers: list[ContainerFacts]
    gpus: list[GpuFacts]
    gone_gpus: list[int]
    changed_workloads: list[WorkloadRow]
    tops: dict[str, str]
    top_workloads: list[WorkloadRow]


class IndexLoader:
    """Reads the store into a SharedIndex; one thread calls `refresh`."""

    def __init__(
        self,
        db: peewee.Database,
        *,
        settings: EnrichmentSettings,
        shared: SharedIndex,
        top_workloads: TopWorkloads,
        wall_time: Callable[[], datetime.datetime] = utc_now,
    ) -> None:
        self._db = db
        self._settings = settings
        self._shared = shared
        self._top_workloads = top_workloads
        self._now = wall_time
        self._cursors: dict[str, Since] | None = None  # None: the first load is still to come
        # Pods not to take in again from a row read a second time: evicted live ones (until a
        # newer row than their stamp), ended ones; uid -> (stamp, when noted).
        self._closed: dict[str, tuple[datetime.datetime, datetime.datetime]] = {}
        self._rechecked: datetime.datetime | None = None  # when live pods were last read again
        self.expired_total = 0
        self.evicted_total = 0

    @property
    def loaded(self) -> bool:
        return self._cursors is not None

    def refresh(self) -> RefreshStats:
        """Read what changed and apply it; StoreError when the store fails (nothing applied,
        the next refresh reads the same again)."""
        now = self._now()
        with store_reading.reading(self._db):
            ids = {name: reading.last_id(model, self._cluster) for name, model in _TABLES.items()}
            if self._cursors is None:
                stats = self._apply_first(self._read_first(now), now)
            else:
                read = self._read_changes(self._cursors, now)
                stats = self._apply_changes(read, now)
        start = now - datetime.timedelta(seconds=self._settings.overlap_seconds)
        self._cursors = {name: Since(at=start, after_id=ids[name]) for name in _TABLES}
        self.expired_total += stats.expired
        self.evicted_total += stats.evicted
        return stats

    @property
    def _cluster(self) -> str:
        return self._settings.cluster

    @property
    def _grace(self) -> datetime.timedelta:
        return datetime.timedelta(seconds=self._settings.ended_grace_seconds)

    # --- the first load ---------------------------------------------------------------------

    def _read_first(self, now: datetime.datetime) -> _Read:
        cluster = self._cluster
        # All live pods, even past max_pods: those evicted then are noted, so that their rows
        # read again do not bring them back.
        pods = reading.first_pods(cluster, ended_after=now - self._grace)
        uids = [p.uid for p in pods]
        containers = {c.container_id: c for c in reading.containers_of(cluster, uids)}
        for container in self._without_rows(reading.live_containers(cluster), set(uids)):
            containers.setdefault(container.container_id, container)
        tops = self._tops(uids)
        return _Read(
            pods_read=len(pods),
            pods=pods,
            containers=list(containers.values()),
            gpus=reading.first_gpus(cluster),
            gone_gpus=[],
            changed_workloads=[],
            tops=tops,
            top_workloads=self._workloads(set(tops.values())),
        )

    def _apply_first(self, read: _Read, now: datetime.datetime) -> RefreshStats:
        index = EnrichmentIndex()
        for pod in read.pods:
            # An ended pod ended when its row says, as far as the reader's clock allows.
            index.put_pod(pod, now=min(now, pod.stamp) if pod.ended else now)
        expired, evicted = self._apply(index, read, now)
        self._shared.replace(index)
        self._rechecked = now
        log.info("enrichment index loaded", extra={"pods": len(index)})
        return self._stats(read, first=True, expired=expired, evicted=evicted)

    # --- the refreshes after it -------------------------------------------------------------

    def _read_changes(self, cursors: dict[str, Since], now: datetime.datetime) -> _Read:
        cluster, index = self._cluster, self._shared.peek()
        team_key = self._settings.team_label_key
        rows = reading.changed_pods(cluster, cursors["pods"])
        live = self._recheck(index, now)
        if live:
            rows = list({p.uid: p for p in [*reading.pods_of(cluster, live), *rows]}.values())
        pods = [p for p in rows if self._admits(index, p, now)]
        fresh = [p.uid for p in pods if index.pod_facts(p.uid) is None]
        moved = [
            p.uid
            for p in pods
            if (known := index.pod_facts(p.uid)) and known.owner_uid != p.owner_uid
        ]
        containers = [
            c
            for c in reading.changed_containers(cluster, cursors["containers"])
            if index.has_pod(c.pod_uid) or c.pod_uid not in self._closed
        ]
        containers = self._without_rows(
            containers, {*fresh, *(c.pod_uid for c in containers if index.has_pod(c.pod_uid))}
        )
        containers += reading.containers_of(cluster, [*fresh, *live])
        containers = list({c.container_id: c for c in containers}.values())
        gpus, gone = reading.changed_gpus(cluster, cursors["gpus"])
        workloads = reading.changed_workloads(cluster, cursors["workloads"], team_key=team_key)
        # A top-level workload that got a parent is no longer its pods' top.
        demoted = [p for w in workloads if w.parent_uid for p in index.pods_under(w.workload.uid)]
        tops = self._tops([*fresh, *moved, *demoted])
        wanted = {t for t in tops.values() if t} - {w.workload.uid for w in workloads}
        return _Read(
            pods_read=len(rows),
            pods=pods,
            containers=containers,
            gpus=gpus,
            gone_gpus=gone,
            changed_workloads=workloads,
            tops=tops,
            top_workloads=self._workloads(wanted),
        )

    def _recheck(self, index: EnrichmentIndex, now: datetime.datetime) -> list[str]:
        """The live pods to read again now (none until recheck_seconds have passed)."""
        every = datetime.timedelta(seconds=self._settings.recheck_seconds)
        if self._rechecked is not None and now - self._rechecked < every:
            return []
        self._rechecked = now
        return index.live_pods()

    def _apply_changes(self, read: _Read, now: datetime.datetime) -> RefreshStats:
        with self._shared.changing() as index:
            for pod in read.pods:
                index.put_pod(pod, now=now)
            for row_id in read.gone_gpus:
                index.drop_gpu(row_id)
            expired, evicted = self._apply(index, read, now)
        return self._stats(read, first=False, expired=expired, evicted=evicted)

    def _admits(self, index: EnrichmentIndex, pod: PodFacts, now: datetime.datetime) -> bool:
        """Whether a changed pod row goes in: pods indexed already, and live pods not closed
        (an ended pod never seen live has no late samples to label)."""
        if index.has_pod(pod.uid):
            return True
        closed = self._closed.get(pod.uid)
        if pod.ended or (closed is not None and pod.stamp <= closed[0]):
            self._closed.setdefault(pod.uid, (_NEVER, now))
            return False
        return True

    def _without_rows(
        self, containers: list[ContainerFacts], indexed: set[str]
    ) -> list[ContainerFacts]:
        """The containers but those of pods outside `indexed` that gpu_pods has: a container
        makes its pod known only where no controller writes pods (the row decides otherwise)."""
        orphans = {c.pod_uid for c in containers if c.pod_uid not in indexed}
        if not orphans:
            return containers
        with_rows = reading.pods_with_rows(self._cluster, orphans)
        return [c for c in containers if c.pod_uid in indexed or c.pod_uid not in with_rows]

    # --- both -------------------------------------------------------------------------------

    def _apply(
        self, index: EnrichmentIndex, read: _Read, now: datetime.datetime
    ) -> tuple[int, int]:
        """Apply what both kinds of refresh read alike, then the bounds; (expired, evicted)."""
        for container in read.containers:
            index.put_container(container, now=now)
        for uid, top in read.tops.items():
            index.set_top(uid, top)
        for row in (*read.changed_workloads, *read.top_workloads):
            if not row.parent_uid:
                index.put_workload(row.workload)
        for gpu in read.gpus:
            index.put_gpu(gpu)
        expired = index.expire(now=now, grace=self._grace)
        evicted = index.evict_to(self._settings.max_pods)
        self._close(expired, evicted, now)
        return len(expired), len(evicted)

    def _close(self, expired: list[str], evicted: list[str], now: datetime.datetime) -> None:
        """Note the pods dropped, so that their rows read again (within the overlap) do not
        bring them back: an expired one never, an evicted one until its row changes."""
        horizon = now - datetime.timedelta(
            seconds=self._settings.overlap_seconds + self._settings.ended_grace_seconds
        )
        self._closed = {uid: v for uid, v in self._closed.items() if v[1] >= horizon}
        for uid in expired:
            self._closed[uid] = (_NEVER, now)
        for uid in evicted:
            self._closed[uid] = (now, now)
        excess = len(self._closed) - self._settings.max_pods
        if excess > 0:  # oldest noted first: dicts keep insertion order
            for uid in list(self._closed)[:excess]:
                del self._closed[uid]

    def _tops(self, pod_uids: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        ordered = sorted(set(pod_uids))
        for start in range(0, len(ordered), _CHUNK):
            found.update(self._top_workloads(self._cluster, ordered[start : start + _CHUNK]))
        return found

    def _workloads(self, uids: set[str]) -> list[WorkloadRow]:
        team_key = self._settings.team_label_key
        return reading.workloads(self._cluster, {u for u in uids if u}, team_key=team_key)

    def _stats(self, read: _Read, *, first: bool, expired: int, evicted: int) -> RefreshStats:
        return RefreshStats(
            first=first,
            pods_read=read.pods_read,
            containers_read=len(read.containers),
            gpus_read=len(read.gpus) + len(read.gone_gpus),
            workloads_read=len(read.changed_workloads) + len(read.top_workloads),
            pods=len(self._shared.peek()),
            expired=expired,
            evicted=evicted,
            generation=self._shared.generation,
        )
