"""Fault injection: the same scenario played twice on identical API emulators — once
undisturbed, once with forced 410s, stalled and dropped watches, an API restart that loses its
history, the controller stopped mid-stream and started again, and (on PostgreSQL) a database
outage. The store must end with the same pods, transitions, workloads and references, with no
duplicate, and no finalizer left behind.

Faults that force a relist (410, a restart losing history) come between steps: versions that
came and went while nobody could watch are gone from the API itself, so no watcher can store
their transitions. Watches dropped or stalled mid-step resume from their last version and miss
nothing."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import peewee
import psycopg2
import pytest

from lens.kube.machinery.reflector import WatchSettings
from lens.kube.workloads.clustersync import ClusterSync
from lens.kube.workloads.finalizers import FINALIZER
from lens.sim.kube.selectors import parse_field_selector, parse_label_selector
from lens.store import database, models

from ..conftest import Played

pytestmark = pytest.mark.slow_timeout

STEPS = (0, 100, 160, 400, 700, 950, 1300)
WATCH = WatchSettings(stall_seconds=1.0, watch_timeout_seconds=30)
SETTINGS: dict[str, Any] = {"finalizer_kinds": ("Job",), "finalizer_grace_seconds": 1.0}
# The faulted run also writes in small batches with few changes waiting, so its watches pause
# for the writer (most of all during the outage).
SMALL_QUEUE: dict[str, Any] = {"batch_changes": 5, "pending_changes": 10}
TABLES = (
    models.GpuPod,
    models.GpuPodEvent,
    models.PodSnapshot,
    models.PodResource,
    models.GpuWorkload,
    models.GpuWorkloadSnapshot,
    models.WorkloadPodReference,
)


def _stored() -> dict[str, set[tuple[object, ...]]]:
    workloads = set()
    for w in models.GpuWorkload.select():
        # A deletion's end, and when it went, are when it was seen.
        end = w.end_at if w.status in ("Succeeded", "Failed") else None
        gone = w.deleted_at is not None
        workloads.add(
            (
                w.uid,
                w.kind,
                w.name,
                w.parent_uid,
                w.status,
                w.status_reason,
                w.gpu_request,
                end,
                gone,
            )
        )
    return {
        "pods": {
            (p.uid, p.name, p.node_name, p.phase, p.deleted, p.running, p.gpu_allocated, p.ip)
            for p in models.GpuPod.select()
        },
        "events": {
            (e.pod_uuid, e.event_type, e.status, e.pod_phase, e.restart_count, e.created_at)
            for e in models.GpuPodEvent.select()
        },
        "resources": {
            (r.uid, r.gpu_model, r.gpu_allocated, r.created_at, r.end_at)
            for r in models.PodResource.select()
        },
        "workloads": workloads,
        "references": {(r.workload_uid, r.pod_uid) for r in models.WorkloadPodReference.select()},
    }


def _idle(played: Played, sync: ClusterSync, eventually: Callable[..., None]) -> None:
    """Wait until the store reflects the cluster as it is now."""
    nodes = played.kube.resource("v1", "Node")
    _, version = played.kube.store.select(
        nodes, None, parse_label_selector(None), parse_field_selector(None, "Node")
    )
    eventually(lambda: sync.caught_up(version), timeout=30)


def _undisturbed(db: peewee.Database, eventually: Callable[..., None]) -> dict[str, Any]:
    played = Played(db)
    try:
        sync = played.sync(watch=WATCH, **SETTINGS)
        for step in STEPS:
            played.player.run_until(step)
            _idle(played, sync, eventually)
        return _stored()
    finally:
        played.close()
        with database.session(db):
            for table in TABLES:
                table.delete().execute()


class Outage:
    """PostgreSQL refuses the database's connections and drops the open ones."""

    def __init__(self, db: peewee.Database) -> None:
        self._name = db.database
        self._admin = psycopg2.connect(host="127.0.0.1", user="postgres", dbname="postgres")
        self._admin.autocommit = True

    def begin(self) -> None:
        with self._admin.cursor() as cursor:
            cursor.execute(f'ALTER DATABASE "{self._name}" ALLOW_CONNECTIONS false')
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (self._name,),
            )

    def end(self) -> None:
        with self._admin.cursor() as cursor:
            cursor.execute(f'ALTER DATABASE "{self._name}" ALLOW_CONNECTIONS true')
        self._admin.close()


def test_faults_change_nothing_in_the_store(
    db: peewee.Database, eventually: Callable[..., None]
) -> None:
    expected = _undisturbed(db, eventually)
    played = Played(db)
    kube, faults = played.kube, played.kube.faults
    try:
        sync = played.sync(watch=WATCH, **SETTINGS, **SMALL_QUEUE)
        for index, step in enumerate(STEPS):
            if index == 2:  # silent streams during the step
                faults.stall_watches()
            played.player.run_until(step)
            if index == 2:
                time.sleep(WATCH.stall_seconds * 1.5)
                faults.resume_watches()
            if index == 3:  # streams dropped while the step's changes arrive
                for _ in range(3):
                    faults.close_watches()
                    time.sleep(0.05)
            if index == 4:  # killed mid-stream, started again
                sync.stop()
                sync = played.sync(watch=WATCH, **SETTINGS, **SMALL_QUEUE)
            if index == 5 and db.__class__.__name__ == "PostgresqlDatabase":
                outage = Outage(db)
                outage.begin()
                time.sleep(0.5)
                outage.end()
            _idle(played, sync, eventually)
            if index == 1:  # the watches' versions expire: relists hand on no change
                faults.force_gone(3)
                faults.close_watches()
                _idle(played, sync, eventually)
            if index == 5:  # the API server restarts, forgetting its history
                kube.restart()
                _idle(played, sync, eventually)
        stored = _stored()
        for table, rows in expected.items():
            assert stored[table] == rows, (
                table,
                [r[-1] for r in stored[table] - rows],
                [r[-1] for r in rows - stored[table]],
            )
        jobs = kube.resource("batch/v1", "Job")
        held = [j for j in _all(kube, jobs) if FINALIZER in _finalizers(j)]
        assert held, "tracked Jobs carry the finalizer"
        for job in held:
            kube.store.delete(jobs, job["metadata"]["namespace"], job["metadata"]["name"])
        eventually(
            lambda: not any(FINALIZER in _finalizers(j) for j in _all(kube, jobs)),
            timeout=10,
        )
    finally:
        played.close()


def _finalizers(obj: dict[str, Any]) -> list[str]:
    return list(obj["metadata"].get("finalizers") or [])


def _all(kube: Any, rtype: Any) -> list[dict[str, Any]]:
    items, _ = kube.store.select(
        rtype, None, parse_label_selector(None), parse_field_selector(None, rtype.kind)
    )
    return list(items)
