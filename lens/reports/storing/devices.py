"""Keep gpu_devices and rdma_devices current from the device inventories agents report, and write
node_device_changelog: one CREATE, UPDATE or DELETE row for each device that changed.

storing/recording.py calls DeviceStore.write inside the event server's batch transaction, once
per inventory (reports/inventory.py) in the order recorded. A part not read (None) is left
alone; a part read is compared with the node's live rows by device identity (a GPU's uuid, an
RDMA device's name) and only what differs is written, so a resent inventory writes nothing.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import cast

import peewee

from lens.reports.inventory import DeviceInventory, GpuFacts, RdmaFacts, RdmaPortFacts
from lens.reports.storing import changes
from lens.runtime.wirevalues import usable_text, usable_time
from lens.store import models
from lens.store.models import nodes

log = logging.getLogger(__name__)

CREATE, UPDATE, DELETE = "CREATE", "UPDATE", "DELETE"
OPS = (CREATE, UPDATE, DELETE)
GPU, RDMA = "gpu", "rdma"  # node_device_changelog.device_type

Row = dict[str, object]

_INT32 = 2**31
_MIB = 2**20
_BATCH_ROWS = 500  # rows per INSERT, well within every engine's limit on parameters
_CHANGELOG_NAME = 256  # node_device_changelog.device_name
_CHANGELOG_UUID = 128  # node_device_changelog.device_uuid


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """A changelog row written: the device's type and identity, the op, what an UPDATE changed."""

    device_type: str
    device: str
    op: str
    changes: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DeviceChanges:
    """The changelog rows one inventory wrote, in the order written."""

    rows: tuple[Change, ...] = ()

    def count(self, op: str) -> int:
        return sum(1 for row in self.rows if row.op == op)

    @property
    def created(self) -> int:
        return self.count(CREATE)

    @property
    def updated(self) -> int:
        return self.count(UPDATE)

    @property
    def deleted(self) -> int:
        return self.count(DELETE)

    def by_op(self) -> dict[str, int]:
        """Rows per op, every op listed (0 where none)."""
        return {op: self.count(op) for op in OPS}


@dataclasses.dataclass(frozen=True, slots=True)
class _Part:
    """How one kind of device is stored."""

    device_type: str
    model: type[models.GpuDevice] | type[models.RdmaDevice]
    identity: str  # the column that identifies a device on its node
    facts: tuple[str, ...]  # the columns compared; a derived one (memory) is not
    name_column: str  # what the changelog's device_name and device_uuid hold
    uuid_column: str
    # Columns kept current but never logged: where the node lists the device, not what it is
    # (a GPU's index shifts when one before it leaves the bus).
    placement: tuple[str, ...] = ()


_GPU = _Part(
    GPU,
    models.GpuDevice,
    "uuid",
    (
        "vendor",
        "gpu_model",
        "serial",
        "pci_bus_id",
        "vbios",
        "vram_bytes",
        "numa_node",
        "compute_partition",
        "memory_partition",
        "driver_version",
        "health",
    ),
    name_column="gpu_model",
    uuid_column="uuid",
    placement=("gpu_id",),
)
_RDMA = _Part(
    RDMA,
    models.RdmaDevice,
    "ifname",
    (
        "node_guid",
        "sys_image_guid",
        "fw",
        "node_type",
        "hca_type",
        "board_id",
        "pci_bus_id",
        "numa_node",
        "netdevs",
        "ports",
    ),
    name_column="ifname",
    uuid_column="node_guid",
)


class DeviceStore:
    """Writes one cluster's device inventories; holds no state between writes."""

    def __init__(self, *, cluster: str) -> None:
        self._cluster = cluster

    def write(self, node: str, inventory: DeviceInventory) -> DeviceChanges:
        """Bring `node`'s device rows to `inventory` and log what changed, in the caller's open
        transaction (the models' database). Its parts that are None are not touched."""
        at = datetime.datetime.fromtimestamp(usable_time(inventory.time), datetime.UTC)
        written: list[Change] = []
        if inventory.gpus is not None:
            written += self._write_part(_GPU, node, [gpu_row(g) for g in inventory.gpus], at)
        if inventory.rdma is not None:
            written += self._write_part(_RDMA, node, [rdma_row(d) for d in inventory.rdma], at)
        return DeviceChanges(rows=tuple(written))

    def _write_part(
        self, part: _Part, node: str, reported: Sequence[Row], at: datetime.datetime
    ) -> list[Change]:
        model = part.model
        query = model.select().where((model.cluster == self._cluster) & (model.node_name == node))
        rows = cast(Iterable[Mapping[str, object]], query.dicts())  # the stubs say models
        stored = {str(row[part.identity]): row for row in rows}
        plan = _plan(part, stored, _identified(part, node, reported))
        new_rows = [
            {**row, "cluster": self._cluster, "node_name": node, "created_at": at, "updated_at": at}
            for row in plan.inserts
        ]
        for batch in peewee.chunked(new_rows, _BATCH_ROWS):
            model.insert_many(batch).execute()
        for row_id, row in plan.updates:
            model.update({**row, "updated_at": at}).where(model.id == row_id).execute()
        if plan.deletes:
            model.update(deleted_at=at, updated_at=at).where(model.id.in_(plan.deletes)).execute()
        return self._log(part, node, plan, at)

    def _log(self, part: _Part, node: str, plan: _Plan, at: datetime.datetime) -> list[Change]:
        entries = [
            {
                "cluster": self._cluster,
                "node_name": node,
                "device_type": part.device_type,
                "device_name": usable_text(_text_of(row, part.name_column), _CHANGELOG_NAME),
                "device_uuid": usable_text(_text_of(row, part.uuid_column), _CHANGELOG_UUID),
                "op": op,
                "changes": named,
                "created_at": at,
            }
            for row, op, named in plan.logged
        ]
        for batch in peewee.chunked(entries, _BATCH_ROWS):
            models.NodeDeviceChangelog.insert_many(batch).execute()
        return [
            Change(
                device_type=part.device_type,
                device=_text_of(row, part.identity),
                op=op,
                changes=named,
            )
            for row, op, named in plan.logged
        ]


@dataclasses.dataclass(slots=True)
class _Plan:
    """The writes that bring a node's rows of one kind to what it reported."""

    inserts: list[Row] = dataclasses.field(default_factory=list)
    updates: list[tuple[object, Row]] = dataclasses.field(default_factory=list)  # id, columns
    deletes: list[object] = dataclasses.field(default_factory=list)  # ids
    logged: list[tuple[Mapping[str, object], str, str]] = dataclasses.field(
        default_factory=list
    )  # the device's row, op, what changed


def _plan(
    part: _Part, stored: Mapping[str, Mapping[str, object]], reported: Sequence[Row]
) -> _Plan:
    """New devices inserted (or their deleted rows revived), changed ones updated, live ones
    missing marked deleted; unchanged ones not touched."""
    plan = _Plan()
    for row in reported:
        old = stored.get(str(row[part.identity]))
        if old is None:
            plan.inserts.append(row)
            plan.logged.append((row, CREATE, ""))
        elif old["deleted_at"] is not None:
            plan.updates.append((old["id"], {**row, "deleted_at": None}))
            plan.logged.append((row, CREATE, ""))
        else:
            named = changes.changes(_comparable(old, part.facts), _comparable(row, part.facts))
            if named:
                plan.updates.append((old["id"], row))
                plan.logged.append((row, UPDATE, changes.summary(named, nodes.CHANGES)))
            elif _comparable(old, part.placement) != _comparable(row, part.placement):
                plan.updates.append((old["id"], row))
    present = {str(row[part.identity]) for row in reported}
    for identity, old in sorted(stored.items()):
        if old["deleted_at"] is None and identity not in present:
            plan.deletes.append(old["id"])
            plan.logged.append((old, DELETE, ""))
    return plan


def _identified(part: _Part, node: str, rows: Iterable[Row]) -> list[Row]:
    """The rows with an identity, the first of each identity (the wire refuses both already)."""
    kept: dict[str, Row] = {}
    for row in rows:
        identity = str(row[part.identity])
        if identity and identity not in kept:
            kept[identity] = row
        else:
            why = "listed twice" if identity else "without an identity"
            log.warning(
                "reported device ignored",
                extra={"node": node, "device_type": part.device_type, "why": why},
            )
    return list(kept.values())


def _comparable(row: Mapping[str, object], columns: Sequence[str]) -> dict[str, object]:
    """The facts of a row as compared: JSON texts read, ports by their number."""
    facts = {column: row.get(column) for column in columns}
    if "netdevs" in facts:
        facts["netdevs"] = _loads(facts["netdevs"])
    if "ports" in facts:
        facts["ports"] = _ports_by_number(_loads(facts["ports"]))
    return facts


def _loads(text: object) -> object:
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None  # not ours: compared as unknown, and rewritten


def _ports_by_number(ports: object) -> dict[object, object]:
    if not isinstance(ports, list):
        return {}
    return {
        port["port"]: {key: value for key, value in port.items() if key != "port"}
        for port in ports
        if isinstance(port, dict) and isinstance(port.get("port"), int)
    }


def _text_of(row: Mapping[str, object], column: str) -> str:
    value = row.get(column)
    return "" if value is None else str(value)


def gpu_row(gpu: GpuFacts) -> Row:
    """The gpu_devices columns of a GPU's facts, made to fit them (never refused)."""
    vram = gpu.vram_bytes
    if vram is not None and not 0 <= vram < 2**63:
        vram = None
    return {
        "uuid": usable_text(gpu.uuid, nodes.DEVICE_UUID),
        "gpu_id": gpu.index if -_INT32 <= gpu.index < _INT32 else -1,
        "vendor": usable_text(gpu.vendor, nodes.DEVICE_SHORT),
        "gpu_model": usable_text(gpu.model, nodes.DEVICE_NAME),
        "serial": usable_text(gpu.serial, nodes.DEVICE_NAME),
        "pci_bus_id": usable_text(gpu.pci_bus_id, nodes.DEVICE_SHORT),
        "vbios": _maybe_text(gpu.vbios, nodes.DEVICE_NAME),
        "vram_bytes": vram,
        "memory": None if vram is None else vram // _MIB,
        "numa_node": _int32(gpu.numa_node),
        "compute_partition": _maybe_text(gpu.compute_partition, nodes.DEVICE_SHORT),
        "memory_partition": _maybe_text(gpu.memory_partition, nodes.DEVICE_SHORT),
        "driver_version": _maybe_text(gpu.driver_version, nodes.DEVICE_SHORT),
        "health": _maybe_text(gpu.health, nodes.DEVICE_NAME),
    }


def rdma_row(device: RdmaFacts) -> Row:
    """The rdma_devices columns of an RDMA device's facts, made to fit them (never refused).

    netdevs are sorted and ports ordered by number, so that the order a node lists them in
    changes nothing; a port number listed twice keeps its first listing."""
    short = nodes.DEVICE_SHORT
    netdevs = sorted({usable_text(name, short) for name in device.netdevs})
    return {
        "ifname": usable_text(device.name, nodes.DEVICE_NAME),
        "node_guid": _maybe_text(device.node_guid, short),
        "sys_image_guid": _maybe_text(device.sys_image_guid, short),
        "fw": _maybe_text(device.fw_version, nodes.DEVICE_NAME),
        "node_type": _maybe_text(device.node_type, short),
        "hca_type": _maybe_text(device.hca_type, short),
        "board_id": _maybe_text(device.board_id, nodes.DEVICE_NAME),
        "pci_bus_id": _maybe_text(device.pci_bus_id, short),
        "numa_node": _int32(device.numa_node),
        "netdevs": _json_list(netdevs, nodes.DEVICE_JSON),
        "ports": _json_list(_port_objects(device.ports), nodes.DEVICE_JSON),
    }


def _port_objects(ports: Iterable[RdmaPortFacts]) -> list[dict[str, object]]:
    short = nodes.DEVICE_SHORT
    by_number: dict[int, dict[str, object]] = {}
    for port in ports:
        rate = port.rate_bytes_per_second
        by_number.setdefault(
            port.port,
            {
                "port": port.port,
                "state": _maybe_text(port.state, short),
                "physical_state": _maybe_text(port.physical_state, short),
                "link_layer": _maybe_text(port.link_layer, short),
                "rate_bytes_per_second": rate if rate is not None and math.isfinite(rate) else None,
                "netdev": _maybe_text(port.netdev, short),
            },
        )
    return [by_number[number] for number in sorted(by_number)]


def _json_list(items: Sequence[object], limit: int) -> str:
    """A JSON list in ASCII of as many of `items` as fit in `limit` characters."""
    encoded = [changes.render(item) for item in items]
    kept, length = 0, 2
    for text in encoded:
        length += len(text) + (1 if kept else 0)
        if length > limit:
            log.warning("device facts cut to fit their column", extra={"kept": kept})
            break
        kept += 1
    return "[" + ",".join(encoded[:kept]) + "]"


def _maybe_text(value: str | None, limit: int) -> str | None:
    return None if value is None else usable_text(value, limit)


def _int32(value: int | None) -> int | None:
    return value if value is not None and -_INT32 <= value < _INT32 else None
