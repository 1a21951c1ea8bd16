"""The original's way of recording GPU pods (REFERENCE.md 11.1), as the benchmark's baseline.

One reconcile per pod event, each statement committed on its own: insert a snapshot, read the
previous snapshot for condition changes, select-then-insert/update gpu_pods and pod_resources,
and walk the owner chain with a GET per level, writing a reference, a workload snapshot and a
select-then-insert workload row at each. Written against the same tables as Lens so that the
same database does the same kind of work.
"""

from __future__ import annotations

import datetime
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import kubernetes
import peewee

from lens.kube.machinery import resources
from lens.kube.workloads import gpupods
from lens.runtime.config import DatabaseConfig
from lens.store import database, models


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class Baseline:
    def __init__(self, api: kubernetes.client.ApiClient, db: peewee.Database) -> None:
        self._api = api
        self._db = db
        self._discovery = resources.Discovery(api)
        self.last_event_at = 0.0
        self.events = 0
        self._stop = threading.Event()
        self.watching = threading.Event()

    def wait_settled(self, timeout: float, quiet: float = 2.0) -> None:
        """Until no event has been processed for `quiet` seconds (after at least one)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.events and time.time() - self.last_event_at > quiet:
                return
            time.sleep(0.1)
        raise RuntimeError("the baseline did not settle")

    def run(self) -> None:
        """Watch pods from now on (the original's initial reconcile of every pod is left out:
        only the measured changes are timed)."""
        core = kubernetes.client.CoreV1Api(self._api)
        listed = core.list_pod_for_all_namespaces(limit=1, _preload_content=False)
        version = json.loads(listed.data)["metadata"]["resourceVersion"]
        watch = kubernetes.watch.Watch()
        self.watching.set()
        with database.session(self._db):
            while not self._stop.is_set():
                for event in watch.stream(
                    core.list_pod_for_all_namespaces, resource_version=version, timeout_seconds=5
                ):
                    pod = event["raw_object"]
                    if gpupods.gpu_count(pod, ("amd.com/gpu",)) > 0:
                        self._reconcile(pod)
                        self.events += 1
                        self.last_event_at = time.time()
                    if self._stop.is_set():
                        break
                version = watch.resource_version or version

    def stop(self) -> None:
        self._stop.set()

    def _reconcile(self, pod: dict[str, Any]) -> None:
        meta = gpupods.metadata(pod)
        uid, version = str(meta.get("uid")), gpupods.resource_version(pod)
        snapshots = models.PodSnapshot
        snapshots.insert(
            cluster="bench",
            pod_uid=uid,
            pod_name=meta.get("name"),
            namespace=meta.get("namespace"),
            spec=pod.get("spec"),
            metadata=dict(meta),
            status=pod.get("status"),
            resource_version=version,
            created_at=_now(),
        ).on_conflict_ignore().execute()
        previous = (
            snapshots.select()
            .where((snapshots.pod_uid == uid) & (snapshots.resource_version < version))
            .order_by(snapshots.resource_version.desc())
            .first()
        )
        self._pod_row(pod, uid)
        self._events(pod, uid, previous)
        self._owners(pod, uid)

    def _pod_row(self, pod: dict[str, Any], uid: str) -> None:
        meta = gpupods.metadata(pod)
        values = {
            "namespace": meta.get("namespace"),
            "name": meta.get("name"),
            "node_name": (pod.get("spec") or {}).get("nodeName") or "",
            "gpu_allocated": gpupods.gpu_count(pod, ("amd.com/gpu",)),
            "phase": gpupods.phase(pod),
            "updated_at": _now(),
        }
        row = models.GpuPod.get_or_none(models.GpuPod.uid == uid)
        if row is None:
            models.GpuPod.insert(cluster="bench", uid=uid, created_at=_now(), **values).execute()
        else:
            models.GpuPod.update(**values).where(models.GpuPod.id == row.id).execute()
        if models.PodResource.get_or_none(models.PodResource.uid == uid) is None:
            models.PodResource.insert(
                cluster="bench", uid=uid, gpu_allocated=values["gpu_allocated"], created_at=_now()
            ).on_conflict_ignore().execute()

    def _events(self, pod: dict[str, Any], uid: str, previous: Any) -> None:
        before = (previous.status or {}).get("conditions") or [] if previous else []
        for condition in (pod.get("status") or {}).get("conditions") or []:
            if condition.get("status") == "True" and condition not in before:
                models.GpuPodEvent.insert(
                    cluster="bench",
                    pod_uuid=uid,
                    pod_phase=gpupods.phase(pod),
                    event_type=condition.get("type"),
                    status="True",
                    created_at=_now(),
                ).on_conflict_ignore().execute()

    def _owners(self, pod: dict[str, Any], uid: str) -> None:
        reference = gpupods.controller_reference(pod)
        namespace = str(gpupods.metadata(pod).get("namespace") or "")
        for _ in range(8):
            if reference is None:
                return
            kind = self._discovery.find(str(reference["apiVersion"]), str(reference["kind"]))
            owner = resources.request_json(
                self._api, "GET", kind.object_path(namespace, str(reference["name"]))
            )
            owner_uid = str(gpupods.metadata(owner).get("uid"))
            refs = models.WorkloadPodReference
            if refs.get_or_none((refs.workload_uid == owner_uid) & (refs.pod_uid == uid)) is None:
                refs.insert(
                    cluster="bench", workload_uid=owner_uid, pod_uid=uid, created_at=_now()
                ).on_conflict_ignore().execute()
            models.GpuWorkloadSnapshot.insert(
                cluster="bench",
                uid=owner_uid,
                kind=kind.kind,
                detail=owner,
                resource_version=gpupods.resource_version(owner),
                created_at=_now(),
            ).on_conflict_ignore().execute()
            if models.GpuWorkload.get_or_none(models.GpuWorkload.uid == owner_uid) is None:
                models.GpuWorkload.insert(
                    cluster="bench",
                    uid=owner_uid,
                    kind=kind.kind,
                    name=reference["name"],
                    namespace=namespace,
                    status="Running",
                    created_at=_now(),
                ).on_conflict_ignore().execute()
            reference = gpupods.controller_reference(owner)


@contextmanager
def running(api_url: str, database_url: str) -> Iterator[Baseline]:
    configuration = kubernetes.client.Configuration()
    configuration.host = api_url
    api = kubernetes.client.ApiClient(configuration)
    db = database.open_database(DatabaseConfig(url=database_url))
    baseline = Baseline(api, db)
    thread = threading.Thread(target=baseline.run, daemon=True)
    thread.start()
    try:
        yield baseline
    finally:
        baseline.stop()
        thread.join(10)
        api.close()
        database.close_all(db)
