"""GPU pods and workloads that ended while no controller watched, settled from the jobs' pod
cache and the controller's rows (the original GET every open pod every 5 s and every open
workload every 20 s, and re-checked Done workloads forever, REFERENCE.md 5.5 and 5.6).

Only what the cache proves is written, and only forward: a pod the cache lacks is closed once
it is older than a grace (a pod the controller stored a moment ago may not have reached this
cache yet); a phase is persisted only when it is later than the stored one (a cache a moment
behind the controller never takes a row back); a workload with no live pod left ends — while
any of its pods still exists, Failed (with the latest failed pod's reason) if one failed, else
Succeeded; Deleted when all are gone (an owner's deletion takes its pods with it) — and an ended
workload is not looked at again.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Mapping, Sequence, Set

import peewee

from lens.kube.machinery.cache import Change, ChangeType, JsonObject
from lens.kube.workloads import gpupods
from lens.kube.workloads.podrecording import GpuPodRecorder
from lens.kube.workloads.rows import DELETED, ended_by_pods, is_live
from lens.store import database, models

_PHASE_ORDER = {"Pending": 0, "Unknown": 0, "Running": 1, "Succeeded": 2, "Failed": 2}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Settled:
    pods_closed: int
    phases_persisted: int
    workloads_ended: int


@dataclasses.dataclass(frozen=True, slots=True)
class _OpenPod:
    uid: str
    phase: str
    created_at: datetime.datetime
    updated_at: datetime.datetime


class Liveness:
    def __init__(
        self,
        db: peewee.Database,
        *,
        cluster: str,
        recorder: GpuPodRecorder,
        grace: datetime.timedelta,
        wall_time: Callable[[], datetime.datetime],
    ) -> None:
        self._db = db
        self._cluster = cluster
        self._recorder = recorder
        self._grace = grace
        self._now = wall_time

    def settle(self, cached: Callable[[str], JsonObject | None]) -> Settled:
        """One pass over the open rows; `cached(uid)`: the pod as the (listed) cache holds it."""
        with database.session(self._db):
            open_pods = self._open_pods()
            closed = self._close_gone(open_pods, cached)
            later = [
                Change(type=ChangeType.MODIFIED, object=pod, old=None)
                for row in open_pods
                if (pod := cached(row.uid)) is not None and _later(gpupods.phase(pod), row.phase)
            ]
            if later:
                self._recorder.record(later)
            still_open = {p.uid for p in open_pods} - closed
            ended = database.idempotent_transaction(  # reads, then writes: the lock first
                self._db, lambda: self._end_workloads(cached, still_open), lock_first=True
            )
        return Settled(pods_closed=len(closed), phases_persisted=len(later), workloads_ended=ended)

    def _open_pods(self) -> list[_OpenPod]:
        table = models.GpuPod
        query = (
            table.select(table.uid, table.phase, table.created_at, table.updated_at)
            .where((table.cluster == self._cluster) & (table.deleted == False))  # noqa: E712
            .tuples()
        )
        return [_OpenPod(*values) for values in database.tuple_rows(query)]

    def _close_gone(
        self, open_pods: Sequence[_OpenPod], cached: Callable[[str], JsonObject | None]
    ) -> set[str]:
        """The open pods the cache lacks, closed; returns their uids."""
        settled_before = self._now() - self._grace
        gone = {p.uid for p in open_pods if cached(p.uid) is None and p.created_at < settled_before}
        if gone:
            self._recorder.close(gone)
        return gone

    def _end_workloads(
        self, cached: Callable[[str], JsonObject | None], still_open: Set[str]
    ) -> int:
        pods_of = self._open_workloads()
        closed_at = self._closed_pods_times([p for ps in pods_of.values() for p in ps])
        ended = 0
        for uid, pod_uids in pods_of.items():
            present = [pod for p in pod_uids if (pod := cached(p)) is not None]
            missing = [p for p in pod_uids if cached(p) is None]
            if any(is_live(pod) for pod in present) or any(p in still_open for p in missing):
                continue  # running, or a pod not settled yet (this cache may be behind)
            ends = [gpupods.finished_at(p) or gpupods.deleted_at(p) for p in present]
            ends += [closed_at.get(p) for p in missing]
            end = max((t for t in ends if t is not None), default=self._now())
            status, reason = ended_by_pods(present) if present else (DELETED, "")
            ended += self._end(uid, status, reason, end)
        return ended

    def _open_workloads(self) -> dict[str, list[str]]:
        """The pods of each workload not ended yet."""
        workload, reference = models.GpuWorkload, models.WorkloadPodReference
        query = (
            workload.select(workload.uid, reference.pod_uid)
            .join(
                reference,
                on=(reference.cluster == workload.cluster)
                & (reference.workload_uid == workload.uid),
            )
            .where((workload.cluster == self._cluster) & workload.end_at.is_null())
            .tuples()
        )
        pods_of: dict[str, list[str]] = {}
        for uid, pod_uid in database.tuple_rows(query):
            pods_of.setdefault(str(uid), []).append(str(pod_uid))
        return pods_of

    def _closed_pods_times(self, uids: Sequence[str]) -> Mapping[str, datetime.datetime]:
        """When each closed (deleted) pod among `uids` was last changed."""
        table = models.GpuPod
        found: dict[str, datetime.datetime] = {}
        for start in range(0, len(uids), 500):
            query = (
                table.select(table.uid, table.updated_at)
                .where(
                    (table.cluster == self._cluster)
                    & table.uid.in_(uids[start : start + 500])
                    & (table.deleted == True)  # noqa: E712  # SQL
                )
                .tuples()
            )
            found.update((str(u), at) for u, at in database.tuple_rows(query))
        return found

    def _end(self, uid: str, status: str, reason: str, end: datetime.datetime) -> int:
        table = models.GpuWorkload
        return int(
            table.update(status=status, status_reason=reason, end_at=end, updated_at=self._now())
            .where((table.cluster == self._cluster) & (table.uid == uid) & table.end_at.is_null())
            .execute()
        )


def _later(cached_phase: str, stored_phase: str) -> bool:
    return _PHASE_ORDER.get(cached_phase, 0) > _PHASE_ORDER.get(stored_phase, 0)
