"""The rows the enrichment index is made of, read from the store as index facts: GPU pods
(gpu_pods, the controller's), containers with their devices (node_containers and
node_container_devices, from the node agents' events), the GPUs nodes reported (gpu_devices) and
workloads (gpu_workloads). Either a first reading or the rows changed since a point.

loading.py calls these inside one store session per refresh; all are peewee queries.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable, Sequence
from typing import Any

import peewee

from lens.store import database, models
from lens.telemetry.enrichment import identity
from lens.telemetry.enrichment.index import (
    GPU,
    RDMA,
    ContainerFacts,
    DeviceFacts,
    GpuFacts,
    PodFacts,
    Workload,
)

ENDED_PHASES = ("Succeeded", "Failed")
LIVE_CONTAINERS = ("Created", "Running")  # node_containers.status (containers/model.py)
DEVICE_KINDS = {"gpu": GPU, "ib": RDMA, "rdma": RDMA}  # node_container_devices.device_type
_CHUNK = 500  # uids per IN (...), well within every engine's limit on parameters


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Since:
    """Rows changed since a point: stamped at or after `at` (by their writers' clocks), or
    inserted after row `after_id` whatever their stamp."""

    at: datetime.datetime
    after_id: int


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadRow:
    workload: Workload
    parent_uid: str


def _changed(model: Any, since: Since) -> peewee.ColumnBase:
    changed: peewee.ColumnBase = (model.updated_at >= since.at) | (model.id > since.after_id)
    return changed


def _chunks(uids: Iterable[str]) -> Iterable[list[str]]:
    ordered = sorted(set(uids))
    for start in range(0, len(ordered), _CHUNK):
        yield ordered[start : start + _CHUNK]


def last_id(model: type[models.LensModel], cluster: str) -> int:
    """The highest row id of `cluster` in the table (0: none)."""
    value = model.select(peewee.fn.MAX(model.id)).where(model.cluster == cluster).scalar()
    return int(value or 0)


def first_pods(cluster: str, *, ended_after: datetime.datetime) -> list[PodFacts]:
    """The pods not ended, and those changed since `ended_after`."""
    return _pod_facts(_pods().where(_first_pods(cluster, ended_after)))


def _first_pods(cluster: str, ended_after: datetime.datetime) -> peewee.ColumnBase:
    pods = models.GpuPod
    live = (pods.deleted == False) & pods.phase.not_in(ENDED_PHASES)  # noqa: E712  # SQL
    where: peewee.ColumnBase = (pods.cluster == cluster) & (live | (pods.updated_at >= ended_after))
    return where


def pods_with_rows(cluster: str, uids: Iterable[str]) -> set[str]:
    """Which of these pods gpu_pods has, in any state."""
    pods = models.GpuPod
    found: set[str] = set()
    for chunk in _chunks(uids):
        query = pods.select(pods.uid).where((pods.cluster == cluster) & pods.uid.in_(chunk))
        found.update(str(uid) for (uid,) in database.tuple_rows(query.tuples()))
    return found


def changed_pods(cluster: str, since: Since) -> list[PodFacts]:
    pods = models.GpuPod
    return _pod_facts(_pods().where((pods.cluster == cluster) & _changed(pods, since)))


def pods_of(cluster: str, uids: Iterable[str]) -> list[PodFacts]:
    """The rows of these pods, whenever they were stamped."""
    pods = models.GpuPod
    found: list[PodFacts] = []
    for chunk in _chunks(uids):
        found += _pod_facts(_pods().where((pods.cluster == cluster) & pods.uid.in_(chunk)))
    return found


def _pods() -> peewee.ModelSelect[models.GpuPod]:
    pods = models.GpuPod
    return pods.select(
        pods.uid,
        pods.name,
        pods.namespace,
        pods.node_name,
        pods.deleted,
        pods.phase,
        pods.owner_uid,
        pods.updated_at,
    )


def _pod_facts(query: peewee.ModelSelect[models.GpuPod]) -> list[PodFacts]:
    return [
        PodFacts(
            uid=str(uid),
            name=str(name),
            namespace=str(namespace),
            node=str(node),
            ended=bool(deleted) or phase in ENDED_PHASES,
            owner_uid=str(owner),
            stamp=stamp,
        )
        for uid, name, namespace, node, deleted, phase, owner, stamp in database.tuple_rows(
            query.tuples()
        )
    ]


def containers_of(cluster: str, pod_uids: Iterable[str]) -> list[ContainerFacts]:
    """The containers with devices of these pods."""
    containers = models.NodeContainer
    found: list[ContainerFacts] = []
    for chunk in _chunks(pod_uids):
        found += _container_facts(cluster, containers.pod_uid.in_(chunk))
    return found


def live_containers(cluster: str) -> list[ContainerFacts]:
    """The live containers with devices, whatever their pods."""
    containers = models.NodeContainer
    return _container_facts(cluster, containers.status.in_(LIVE_CONTAINERS))


def changed_containers(cluster: str, since: Since) -> list[ContainerFacts]:
    """The containers with devices changed since `since`, each with all its devices: the
    event server writes a container's device rows in the transaction that upserts its row."""
    return _container_facts(cluster, _changed(models.NodeContainer, since))


def _container_facts(cluster: str, where: peewee.ColumnBase) -> list[ContainerFacts]:
    containers, devices = models.NodeContainer, models.NodeContainerDevice
    query = (
        containers.select(
            containers.container_id,
            containers.pod_uid,
            containers.pod_name,
            containers.pod_namespace,
            containers.node_name,
            containers.status,
            containers.updated_at,
            devices.device_type,
            devices.device_no,
            devices.device_uuid,
            devices.device_name,
        )
        .join(
            devices,
            on=(devices.cluster == containers.cluster)
            & (devices.container_id == containers.container_id),
        )
        .where((containers.cluster == cluster) & where)
        .order_by(containers.container_id, devices.id)
        .tuples()
    )
    grouped: dict[str, tuple[tuple[Any, ...], list[DeviceFacts]]] = {}
    for row in database.tuple_rows(query):
        device = _device(str(row[7]), row[8], str(row[9]), str(row[10]))
        entry = grouped.setdefault(str(row[0]), (row, []))
        if device is not None and device not in entry[1]:
            entry[1].append(device)
    return [_container(row, found) for row, found in grouped.values()]


def _container(row: Sequence[Any], devices: list[DeviceFacts]) -> ContainerFacts:
    cid, pod_uid, pod_name, namespace, node, status, stamp = row[:7]
    return ContainerFacts(
        container_id=str(cid),
        pod_uid=str(pod_uid),
        pod_name=str(pod_name),
        pod_namespace=str(namespace),
        node=str(node),
        live=status in LIVE_CONTAINERS,
        stamp=stamp,
        devices=tuple(devices),
    )


def _device(kind: str, number: object, uuid: str, name: str) -> DeviceFacts | None:
    """A device row as index facts: a GPU by its uuid (node_container_devices.device_uuid holds
    the GPU's uuid, device_no its index as Lens numbers GPUs, device_name its model), an RDMA
    device by its name (device_uuid holds its node GUID)."""
    found = DEVICE_KINDS.get(kind.lower())
    index = int(number) if isinstance(number, int) else -1
    if found == GPU:
        return DeviceFacts(kind=GPU, number=index, id=gpu_id(uuid, index))
    if found == RDMA and name:
        return DeviceFacts(kind=RDMA, number=index, id=name)
    return None


def gpu_id(uuid: str, index: int) -> str:
    """What the index knows a GPU by: its normal uuid; its index where it has none (an AMD
    card whose driver gives no unique_id), alike in gpu_devices and the containers' rows."""
    return identity.normal_uuid(uuid) or f"index:{index}"


def first_gpus(cluster: str) -> list[GpuFacts]:
    """The GPUs nodes have now."""
    gpus = models.GpuDevice
    return [f for f, deleted in _gpus((gpus.cluster == cluster) & gpus.deleted_at.is_null())]


def changed_gpus(cluster: str, since: Since) -> tuple[list[GpuFacts], list[int]]:
    """The GPUs reported or changed since `since`, and the rows of those that left."""
    gpus = models.GpuDevice
    rows = _gpus((gpus.cluster == cluster) & _changed(gpus, since))
    return [f for f, deleted in rows if not deleted], [f.row_id for f, deleted in rows if deleted]


def _gpus(where: peewee.ColumnBase) -> list[tuple[GpuFacts, bool]]:
    gpus = models.GpuDevice
    query = gpus.select(
        gpus.id,
        gpus.node_name,
        gpus.uuid,
        gpus.gpu_id,
        gpus.pci_bus_id,
        gpus.serial,
        gpus.deleted_at,
    ).where(where)
    return [
        (
            GpuFacts(
                row_id=int(row_id),
                node=str(node),
                uuid=gpu_id(str(uuid), int(index)),
                index=str(index) if int(index) >= 0 else "",
                pci=identity.normal_pci(str(pci)) or "",
                serial=identity.normal_serial(str(serial)) or "",
            ),
            deleted is not None,
        )
        for row_id, node, uuid, index, pci, serial, deleted in database.tuple_rows(query.tuples())
    ]


def workloads(cluster: str, uids: Iterable[str], *, team_key: str) -> list[WorkloadRow]:
    table = models.GpuWorkload
    found: list[WorkloadRow] = []
    for chunk in _chunks(uids):
        found += _workloads((table.cluster == cluster) & table.uid.in_(chunk), team_key)
    return found


def changed_workloads(cluster: str, since: Since, *, team_key: str) -> list[WorkloadRow]:
    table = models.GpuWorkload
    return _workloads((table.cluster == cluster) & _changed(table, since), team_key)


def _workloads(where: peewee.ColumnBase, team_key: str) -> list[WorkloadRow]:
    table = models.GpuWorkload
    query = table.select(table.uid, table.kind, table.name, table.parent_uid, table.labels).where(
        where
    )
    return [
        WorkloadRow(
            workload=Workload(
                uid=str(uid), kind=str(kind), name=str(name), team=_team(labels, team_key)
            ),
            parent_uid=str(parent),
        )
        for uid, kind, name, parent, labels in database.tuple_rows(query.tuples())
    ]


def _team(labels: object, key: str) -> str:
    """The workload label `key`'s value, as lens/usage/gpuhours.py reads a team ('' none)."""
    value = labels.get(key) if key and isinstance(labels, dict) else None
    return value if isinstance(value, str) else ""
