"""Write GPU pods' changes to the store: gpu_pods, gpu_pods_events, pod_snapshots, pod_resources.

One transaction per batch of changes (a listing, or one watch event). Rows are keyed so that
replaying a change (a relist after a restart) writes nothing twice: events by their own time,
snapshots by resourceVersion and only when spec, labels or status changed, at most
`snapshot_history` per pod. Pods the store still holds as live but a full listing lacks were
deleted while nobody watched: `close_missing` marks them deleted, at the time it learns it.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Collection, Sequence

import peewee

from lens.kube.machinery.cache import Change, ChangeType, JsonObject
from lens.kube.workloads import gpupods
from lens.store import database, history, models, upserting


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Recorded:
    pods: int
    events: int  # new gpu_pods_events rows
    snapshots: int  # new pod_snapshots rows


class GpuPodRecorder:
    """Commits GPU pods' changes for one cluster."""

    def __init__(
        self,
        db: peewee.Database,
        *,
        cluster: str,
        resources: Sequence[str],
        snapshot_history: int,
        gpu_model: Callable[[str], str],
        wall_time: Callable[[], datetime.datetime],
    ) -> None:
        """`gpu_model(node name)`: the GPU model its labels name ("" when unknown)."""
        self._db = db
        self._cluster = cluster
        self._resources = tuple(resources)
        self._history = snapshot_history
        self._gpu_model = gpu_model
        self._now = wall_time

    def is_gpu_pod(self, pod: JsonObject) -> bool:
        return gpupods.gpu_count(pod, self._resources) > 0

    def gpu_changes(self, changes: Sequence[Change]) -> list[Change]:
        """The changes of GPU pods among `changes`: what `record` takes."""
        return [c for c in changes if self.is_gpu_pod(c.object)]

    def record(self, wanted: Sequence[Change]) -> Recorded:
        """Store changes of GPU pods (found by gpu_changes, whose result the caller reuses)."""
        if not wanted:
            return Recorded(pods=0, events=0, snapshots=0)
        return database.idempotent_transaction(self._db, lambda: self._write(wanted))

    def close_missing(self, present: Collection[str]) -> int:
        """Mark deleted the live GPU pods of this cluster that a full listing lacked."""

        def close() -> int:
            table = models.GpuPod
            live = table.select(table.uid).where(
                (table.cluster == self._cluster) & (table.deleted == False)  # noqa: E712  # SQL
            )
            gone = [str(row.uid) for row in live if row.uid not in present]
            self._close(gone)
            return len(gone)

        return database.idempotent_transaction(self._db, close)

    def close(self, uids: Collection[str]) -> int:
        """Mark deleted exactly the GPU pods `uids` (those still open); returns how many."""
        return database.idempotent_transaction(self._db, lambda: self._close(sorted(uids)))

    def _close(self, gone: Sequence[str]) -> int:
        table, resource = models.GpuPod, models.PodResource
        now = self._now()
        closed = 0
        for start in range(0, len(gone), 500):
            chunk = gone[start : start + 500]
            closed += (
                table.update(deleted=True, running=False, updated_at=now)
                .where(
                    (table.cluster == self._cluster)
                    & table.uid.in_(chunk)
                    & (table.deleted == False)  # noqa: E712  # SQL
                )
                .execute()
            )
            resource.update(end_at=now).where(
                (resource.cluster == self._cluster)
                & resource.uid.in_(chunk)
                & resource.end_at.is_null()
            ).execute()
        return int(closed)

    def _write(self, changes: Sequence[Change]) -> Recorded:
        now = self._now()
        pods = [self._pod_row(c, now) for c in changes]
        upserting.upsert(models.GpuPod, pods)
        events = upserting.insert_new(
            models.GpuPodEvent, [row for c in changes for row in self._event_rows(c)]
        )
        resources = [self._resource_row(c, row, now) for c, row in zip(changes, pods, strict=True)]
        upserting.upsert(models.PodResource, resources)
        snapshots = self._write_snapshots(changes)
        return Recorded(pods=len(pods), events=events, snapshots=snapshots)

    def _pod_row(self, change: Change, now: datetime.datetime) -> upserting.Row:
        pod = change.object
        meta = gpupods.metadata(pod)
        status = pod.get("status") or {}
        deleted = change.type is ChangeType.DELETED or gpupods.deleted_at(pod) is not None
        phase = gpupods.phase(pod)
        updated = now if change.type is ChangeType.DELETED else gpupods.last_change(pod) or now
        return {
            "cluster": self._cluster,
            "uid": str(meta.get("uid")),
            "namespace": str(meta.get("namespace") or ""),
            "name": str(meta.get("name") or ""),
            "node_name": str((pod.get("spec") or {}).get("nodeName") or ""),
            "gpu_allocated": gpupods.gpu_count(pod, self._resources),
            "phase": phase,
            "deleted": deleted,
            "running": phase == "Running" and not deleted,
            "ip": str(status.get("podIP") or ""),
            "owner_uid": gpupods.owner_uid(pod),
            "created_at": gpupods.created_at(pod) or now,
            "updated_at": updated,
        }

    def _event_rows(self, change: Change) -> list[upserting.Row]:
        if change.type is ChangeType.DELETED:
            return []
        uid = str(gpupods.metadata(change.object).get("uid"))
        return [
            {
                "cluster": self._cluster,
                "pod_uuid": uid,
                "pod_phase": t.phase,
                "event_type": t.event_type,
                "status": t.status,
                "restart_count": t.restart_count,
                "created_at": t.at,
            }
            for t in gpupods.transitions(change.old, change.object)
        ]

    def _resource_row(
        self, change: Change, pod_row: upserting.Row, now: datetime.datetime
    ) -> upserting.Row:
        """The pod_resources row, sharing what the gpu_pods row of the change already read."""
        pod = change.object
        end = gpupods.finished_at(pod) or gpupods.deleted_at(pod)
        if change.type is ChangeType.DELETED and end is None:
            end = now
        node = str(pod_row["node_name"])
        return {
            "cluster": self._cluster,
            "uid": pod_row["uid"],
            "gpu_model": self._gpu_model(node) if node else "",
            "gpu_allocated": pod_row["gpu_allocated"],
            "created_at": pod_row["created_at"],
            "end_at": end,
        }

    def _write_snapshots(self, changes: Sequence[Change]) -> int:
        fresh = [c for c in changes if c.type is not ChangeType.DELETED and _changed(c)]
        unseen = [c for c in fresh if c.old is None]
        if unseen:  # first sight in this process: a snapshot only if the store has none
            stored = self._pods_with_snapshots([_uid(c.object) for c in unseen])
            fresh = [c for c in fresh if c.old is not None or _uid(c.object) not in stored]
        rows = [
            {
                "cluster": self._cluster,
                "pod_uid": _uid(c.object),
                "pod_name": str(gpupods.metadata(c.object).get("name") or ""),
                "namespace": str(gpupods.metadata(c.object).get("namespace") or ""),
                "spec": c.object.get("spec"),
                "metadata": gpupods.metadata(c.object),
                "status": c.object.get("status"),
                "resource_version": gpupods.resource_version(c.object),
                "created_at": self._now(),
            }
            for c in fresh
        ]
        written = upserting.insert_new(models.PodSnapshot, rows)
        # A pod seen for the first time got its first snapshot: only known ones can overflow.
        for uid in {_uid(c.object) for c in fresh if c.old is not None}:
            self._trim_snapshots(uid)
        return written

    def _pods_with_snapshots(self, uids: Sequence[str]) -> set[str]:
        table = models.PodSnapshot
        return history.with_history(table, table.pod_uid, self._cluster, uids)

    def _trim_snapshots(self, uid: str) -> None:
        """Keep the newest `snapshot_history` snapshots of one pod."""
        table = models.PodSnapshot
        mine = (table.cluster == self._cluster) & (table.pod_uid == uid)
        history.keep_newest(table, table.resource_version, mine, self._history)


def _uid(pod: JsonObject) -> str:
    return str(gpupods.metadata(pod).get("uid"))


def _changed(change: Change) -> bool:
    if change.old is None:
        return True
    return gpupods.snapshot_digest(change.old) != gpupods.snapshot_digest(change.object)
