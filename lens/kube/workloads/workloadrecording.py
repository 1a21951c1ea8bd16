"""Write workloads to the store: gpu_workloads, workload_pod_references, gpu_workload_snapshots.

Unlike the original (REFERENCE.md 11.1), a workload's row is updated whenever its object or
its pods change; references are unique per (workload, pod); a snapshot is written only when
the object's spec, labels, deletion or status changed, and at most `snapshot_history` are kept.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Collection, Sequence

import peewee

from lens.kube.machinery.cache import JsonObject
from lens.kube.workloads import gpupods
from lens.kube.workloads.rows import DELETED, FAILED, SUCCEEDED, WorkloadState, is_ended
from lens.store import database, history, models, upserting


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadWrite:
    state: WorkloadState
    object: JsonObject
    snapshot: bool  # the object changed meaningfully since the last snapshot this process wrote


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StoredWorkload:
    uid: str
    group_version: str
    kind: str
    status: str


class WorkloadRecorder:
    """Commits workloads of one cluster (inside the caller's transaction where there is one)."""

    def __init__(
        self,
        db: peewee.Database,
        *,
        cluster: str,
        snapshot_history: int,
        wall_time: Callable[[], datetime.datetime],
    ) -> None:
        self._db = db
        self._cluster = cluster
        self._history = snapshot_history
        self._now = wall_time

    def record(self, writes: Sequence[WorkloadWrite]) -> int:
        """Upsert rows, references and snapshots; returns the snapshots written."""
        if not writes:
            return 0
        return database.idempotent_transaction(self._db, lambda: self._write(writes))

    def _write(self, writes: Sequence[WorkloadWrite]) -> int:
        now = self._now()
        groups: dict[tuple[str, ...], list[upserting.Row]] = {}
        for write in writes:
            groups.setdefault(_kept_columns(write.state), []).append(self._row(write.state, now))
        for keep, rows in groups.items():
            upserting.upsert(models.GpuWorkload, rows, keep=keep)
        self._end_settled([w.state for w in writes if is_ended(w.state.status)])
        references = [
            {
                "cluster": self._cluster,
                "workload_uid": w.state.uid,
                "pod_uid": pod,
                "created_at": now,
            }
            for w in writes
            for pod in w.state.pod_uids
        ]
        upserting.insert_new(models.WorkloadPodReference, references)
        return self._write_snapshots([w for w in writes if w.snapshot], now)

    def _end_settled(self, states: Sequence[WorkloadState]) -> None:
        """An ended workload keeps the end it was first stored with (its pods may be gone
        from the caches by the time it is written again)."""
        table = models.GpuWorkload
        for state in states:
            table.update(end_at=state.end_at).where(
                (table.cluster == self._cluster) & (table.uid == state.uid) & table.end_at.is_null()
            ).execute()

    def _row(self, state: WorkloadState, now: datetime.datetime) -> upserting.Row:
        return {
            "cluster": self._cluster,
            "uid": state.uid,
            "group_version": state.group_version,
            "kind": state.kind,
            "namespace": state.namespace,
            "name": state.name,
            "parent_uid": state.parent_uid,
            "labels": state.labels,
            "status": state.status,
            "status_reason": state.status_reason,
            "source": "k8s",
            "gpu_request": state.gpu_request,
            "created_at": state.created_at,
            "updated_at": now,
            "end_at": state.end_at,
            "deleted_at": state.deleted_at,
        }

    def _write_snapshots(self, writes: Sequence[WorkloadWrite], now: datetime.datetime) -> int:
        rows = [
            {
                "cluster": self._cluster,
                "uid": w.state.uid,
                "group_version": w.state.group_version,
                "kind": w.state.kind,
                "name": w.state.name,
                "namespace": w.state.namespace,
                "metadata": gpupods.metadata(w.object),
                "detail": w.object,
                "resource_version": gpupods.resource_version(w.object),
                "created_at": now,
            }
            for w in writes
        ]
        written = upserting.insert_new(models.GpuWorkloadSnapshot, rows)
        for uid in {w.state.uid for w in writes}:
            self._trim(uid)
        return written

    def _trim(self, uid: str) -> None:
        table = models.GpuWorkloadSnapshot
        mine = (table.cluster == self._cluster) & (table.uid == uid)
        history.keep_newest(table, table.resource_version, mine, self._history)

    def with_snapshots(self, uids: Sequence[str]) -> set[str]:
        """Which of these workloads have a snapshot stored already."""
        table = models.GpuWorkloadSnapshot
        with database.session(self._db):
            return history.with_history(table, table.uid, self._cluster, uids)

    def open_workloads(self) -> list[StoredWorkload]:
        """The workloads stored as not deleted: watched again after a restart."""
        table = models.GpuWorkload
        with database.session(self._db):
            rows = table.select(table.uid, table.group_version, table.kind, table.status).where(
                _not_deleted(table, self._cluster)
            )
            return [
                StoredWorkload(
                    uid=str(r.uid),
                    group_version=str(r.group_version),
                    kind=str(r.kind),
                    status=str(r.status),
                )
                for r in rows
            ]

    def close_missing(self, group_version: str, kind: str, present: Collection[str]) -> list[str]:
        """Mark deleted the open workloads of a kind that a full listing lacked; their uids."""

        def close() -> list[str]:
            table = models.GpuWorkload
            open_rows = table.select(table.uid).where(
                _not_deleted(table, self._cluster)
                & (table.group_version == group_version)
                & (table.kind == kind)
            )
            gone = [str(r.uid) for r in open_rows if r.uid not in present]
            now = self._now()
            for start in range(0, len(gone), 500):
                chunk = gone[start : start + 500]
                mine = (table.cluster == self._cluster) & table.uid.in_(chunk)
                table.update(deleted_at=now, updated_at=now).where(mine).execute()
                # What ended before it went keeps its outcome (a Job's TTL deleting it).
                table.update(status=DELETED, status_reason="").where(
                    mine & table.status.not_in((SUCCEEDED, FAILED))
                ).execute()
                table.update(end_at=now).where(mine & table.end_at.is_null()).execute()
            return gone

        return database.idempotent_transaction(self._db, close)


def _not_deleted(table: type[models.GpuWorkload], cluster: str) -> peewee.ColumnBase:
    """The cluster's workloads whose object was not seen deleted (rows written before
    deleted_at was set say so by their status)."""
    return (table.cluster == cluster) & table.deleted_at.is_null() & (table.status != DELETED)


def _kept_columns(state: WorkloadState) -> tuple[str, ...]:
    """Columns an update leaves as stored: with no live pod the request it had; once ended
    the end it had (the insert still writes both)."""
    keep = list(upserting.INSERT_ONLY_COLUMNS)
    if not state.request_is_live:
        keep.append("gpu_request")
    if is_ended(state.status):
        keep.append("end_at")
    return tuple(keep)
