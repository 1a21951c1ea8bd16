"""Read a node's devices and their changelog (written by the jobs from the agents' inventories,
reports/storing/devices.py), for the API's /v1/nodes/{name}/gpuDevices and /changelog.

A node is known when the `nodes` table or the table read has it: the agents report devices of
nodes the jobs may not watch (no Kubernetes API), and a node's changelog outlives its row.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

import peewee

from lens.store import database, models
from lens.store.queries.reading import Page, reading

DEVICE_TYPES = ("gpu", "rdma")
OPS = ("CREATE", "UPDATE", "DELETE")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GpuDeviceRecord:
    """A GPU present on a node now (a `gpu_devices` row not marked deleted)."""

    gpu_id: int  # the index the node gives it; -1: unknown
    uuid: str
    gpu_model: str
    memory_mib: int | None
    utilization: float | None
    temperature: float | None
    power: float | None
    health: str | None = None  # "healthy", "degraded: throttle_thermal"; None: not judged


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ChangeRecord:
    """One `node_device_changelog` row."""

    device_type: str
    device_name: str
    device_uuid: str
    op: str
    changes: str
    created_at: datetime.datetime


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ChangelogFilter:
    device_type: str = ""  # "": every type
    op: str = ""  # "": every op

    def __post_init__(self) -> None:
        if self.device_type not in ("", *DEVICE_TYPES) or self.op not in ("", *OPS):
            raise ValueError(f"no changelog rows of {self.device_type!r}/{self.op!r}")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ChangelogPage:
    rows: tuple[ChangeRecord, ...]
    total: int


def _has_rows(model: type[models.LensModel], cluster: str, node_name: str) -> bool:
    column: peewee.Field[Any] = model.node_name  # type: ignore[attr-defined]  # models with nodes
    return bool(model.select().where((model.cluster == cluster) & (column == node_name)).exists())


def _known(model: type[models.LensModel], cluster: str, node_name: str) -> bool:
    node = models.Node
    listed = node.select().where((node.cluster == cluster) & (node.name == node_name)).exists()
    return bool(listed) or _has_rows(model, cluster, node_name)


def gpu_devices(
    db: peewee.Database, *, cluster: str, node_name: str
) -> tuple[GpuDeviceRecord, ...] | None:
    """The GPUs present on the node in index order, or None when the node is unknown."""
    device = models.GpuDevice
    query = (
        device.select(
            device.gpu_id,
            device.uuid,
            device.gpu_model,
            device.memory,
            device.utilization,
            device.temperature,
            device.power,
            device.health,
        )
        .where(
            (device.cluster == cluster)
            & (device.node_name == node_name)
            & device.deleted_at.is_null()
        )
        .order_by(device.gpu_id, device.uuid)
        .tuples()
    )
    with reading(db):
        if not _known(device, cluster, node_name):
            return None
        return tuple(
            GpuDeviceRecord(
                gpu_id=int(gpu_id),
                uuid=str(uuid),
                gpu_model=str(model),
                memory_mib=None if memory is None else int(memory),
                utilization=utilization,
                temperature=temperature,
                power=power,
                health=None if health is None else str(health),
            )
            for gpu_id, uuid, model, memory, utilization, temperature, power, health in (
                database.tuple_rows(query)
            )
        )


def changelog(
    db: peewee.Database, *, cluster: str, node_name: str, wanted: ChangelogFilter, page: Page
) -> ChangelogPage | None:
    """A page of the node's device changes, newest first, or None when the node is unknown."""
    log = models.NodeDeviceChangelog
    where = (log.cluster == cluster) & (log.node_name == node_name)
    if wanted.device_type:
        where &= log.device_type == wanted.device_type
    if wanted.op:
        where &= log.op == wanted.op
    query = (
        log.select(
            log.device_type, log.device_name, log.device_uuid, log.op, log.changes, log.created_at
        )
        .where(where)
        .order_by(log.created_at.desc(), log.id.desc())
        .offset(page.offset)
        .limit(page.limit)
        .tuples()
    )
    with reading(db):
        if not _known(log, cluster, node_name):
            return None
        rows = tuple(
            ChangeRecord(
                device_type=str(kind),
                device_name=str(name),
                device_uuid=str(uuid),
                op=str(op),
                changes=str(changes),
                created_at=created_at,
            )
            for kind, name, uuid, op, changes, created_at in database.tuple_rows(query)
        )
        total = log.select().where(where).count()
    return ChangelogPage(rows=rows, total=total)
