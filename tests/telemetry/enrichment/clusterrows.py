"""A small GPU cluster written to the store by Lens's own writers, as the enrichment index reads
it: pods by the controller's GpuPodRecorder, workloads by its WorkloadRecorder (from the state
kube/workloads/rows.py computes), containers and their devices by the event server's
EventRecorder, and the GPUs nodes reported as gpu_devices rows. Time is a hand-moved clock.
"""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Sequence

import peewee

from lens.containers.model import Container, ContainerEvent, Device, EventType, Pod, Source
from lens.containers.server.recording import EventRecorder
from lens.kube.machinery.cache import Change, ChangeType, JsonObject
from lens.kube.workloads import gpupods, rows
from lens.kube.workloads.gpupods import DEFAULT_GPU_RESOURCES
from lens.kube.workloads.podrecording import GpuPodRecorder
from lens.kube.workloads.workloadrecording import WorkloadRecorder, WorkloadWrite
from lens.store import database, models

CLUSTER = "lab"
T0 = datetime.datetime(2026, 5, 1, 12, 0, 0, tzinfo=datetime.UTC)
GPU_MODEL = "AMD Instinct MI300X"


class Clock:
    """Wall time that moves only when told."""

    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> datetime.datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += datetime.timedelta(seconds=seconds)


def rfc3339(at: datetime.datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def workload_object(
    uid: str,
    kind: str,
    *,
    name: str,
    namespace: str = "ml",
    owner: JsonObject | None = None,
    labels: dict[str, str] | None = None,
) -> JsonObject:
    meta: JsonObject = {
        "uid": uid,
        "name": name,
        "namespace": namespace,
        "resourceVersion": "1",
        "creationTimestamp": rfc3339(T0 - datetime.timedelta(hours=1)),
        "labels": labels or {},
    }
    if owner is not None:
        meta["ownerReferences"] = [_reference(owner)]
    return {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": meta}


def _reference(owner: JsonObject) -> JsonObject:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }


class LabCluster:
    """Writes the cluster's changes at the clock's time."""

    def __init__(self, db: peewee.Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        self._pods = GpuPodRecorder(
            db,
            cluster=CLUSTER,
            resources=DEFAULT_GPU_RESOURCES,
            snapshot_history=1,
            gpu_model=lambda _node: GPU_MODEL,
            wall_time=clock,
        )
        self._workloads = WorkloadRecorder(db, cluster=CLUSTER, snapshot_history=1, wall_time=clock)
        self._events = EventRecorder(db, cluster=CLUSTER)
        self._sequence = itertools.count(1)
        self.objects: dict[str, JsonObject] = {}

    def pod(
        self,
        uid: str,
        *,
        name: str,
        node: str,
        namespace: str = "ml",
        owner: JsonObject | None = None,
        gpus: int = 1,
    ) -> JsonObject:
        """A GPU pod created and running from now (its row stamped now)."""
        meta: JsonObject = {
            "uid": uid,
            "name": name,
            "namespace": namespace,
            "resourceVersion": "1",
            "creationTimestamp": rfc3339(self.clock()),
        }
        if owner is not None:
            meta["ownerReferences"] = [_reference(owner)]
        pod: JsonObject = {
            "metadata": meta,
            "spec": {
                "nodeName": node,
                "containers": [{"name": "main", "resources": {"limits": {"amd.com/gpu": gpus}}}],
            },
            "status": {"phase": "Running"},
        }
        self._record(ChangeType.ADDED, pod, None)
        return pod

    def finish(self, pod: JsonObject) -> JsonObject:
        """The pod Succeeded now."""
        done = {
            **pod,
            "status": {
                "phase": "Succeeded",
                "containerStatuses": [
                    {"name": "main", "state": {"terminated": {"finishedAt": rfc3339(self.clock())}}}
                ],
            },
        }
        self._record(ChangeType.MODIFIED, done, pod)
        return done

    def delete(self, pod: JsonObject) -> None:
        self._record(ChangeType.DELETED, pod, pod)

    def _record(self, kind: ChangeType, pod: JsonObject, old: JsonObject | None) -> None:
        self.objects[str(pod["metadata"]["uid"])] = pod
        self._pods.record([Change(type=kind, object=pod, old=old)])

    def workloads(self, objects: Sequence[JsonObject]) -> None:
        """Write the workloads, each with the pods directly below it."""
        writes = []
        for obj in objects:
            uid = obj["metadata"]["uid"]
            below = [p for p in self.objects.values() if gpupods.owner_uid(p) == uid]
            state = rows.state(
                obj, below, resources=DEFAULT_GPU_RESOURCES, gone=False, now=self.clock()
            )
            writes.append(WorkloadWrite(state=state, object=obj, snapshot=False))
        self._workloads.record(writes)

    def container(
        self,
        pod: JsonObject | None,
        *,
        node: str,
        container_id: str,
        gpus: Sequence[tuple[int, str]] = (),
        rdma: Sequence[str] = (),
        event: EventType = EventType.STARTED,
    ) -> None:
        """A container event of the pod's (None: outside any pod) holding GPUs (index, uuid)
        and RDMA devices, told by the node's agent now."""
        meta = pod["metadata"] if pod is not None else None
        devices = [Device(type="gpu", name=GPU_MODEL, number=i, uuid=u) for i, u in gpus]
        devices += [
            Device(type="ib", name=name, number=n, uuid=f"guid-{name}")
            for n, name in enumerate(rdma)
        ]
        status = {EventType.STARTED: "Running", EventType.EXITED: "Exit"}[event]
        when = self.clock().timestamp()
        container = Container(
            id=container_id,
            name="main",
            pod=Pod(uid=meta["uid"], name=meta["name"], namespace=meta["namespace"])
            if meta is not None
            else None,
            devices=tuple(devices),
            created_at=when,
            status=status,
            exit_code=0 if event is EventType.EXITED else None,
        )
        record = ContainerEvent(
            type=event, source=Source.CONTAINERD, container=container, time=when
        )
        self._events.commit(
            node=node, boot_id="boot-1", records=[record], through=next(self._sequence)
        )

    def gpus(self, node: str, gpus: Sequence[tuple[int, str, str, str]]) -> None:
        """The node reports GPUs (index, uuid, PCI address, serial) now."""
        rows_ = [
            {
                "cluster": CLUSTER,
                "node_name": node,
                "gpu_id": index,
                "uuid": uuid,
                "pci_bus_id": pci,
                "serial": serial,
                "vendor": "amd",
                "gpu_model": GPU_MODEL,
                "created_at": self.clock(),
                "updated_at": self.clock(),
            }
            for index, uuid, pci, serial in gpus
        ]
        with database.session(self.db):
            models.GpuDevice.insert_many(rows_).execute()

    def remove_gpu(self, node: str, uuid: str) -> None:
        table = models.GpuDevice
        with database.session(self.db):
            table.update(deleted_at=self.clock(), updated_at=self.clock()).where(
                (table.node_name == node) & (table.uuid == uuid)
            ).execute()
