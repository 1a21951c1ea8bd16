"""/v1/nodes: the GPU nodes (list, one node, its GPUs, its device changelog), read from the
store through store/queries/nodes.py and devices.py, shaped as the original's payloads.
"""

from __future__ import annotations

import datetime
import enum
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from lens.roles.api import envelope
from lens.roles.api.envelope import NotFoundError
from lens.roles.api.routers import measured, params
from lens.roles.api.schemas import base
from lens.roles.api.schemas import nodes as payloads
from lens.store import freshness
from lens.store.queries import devices, gpus, nodes
from lens.store.queries.reading import Page

NodeOrder = enum.Enum(  # type: ignore[misc]  # the functional API: one list of allowed columns
    "NodeOrder", {column: column for column in nodes.SORTABLE}, type=str
)
"""The columns /v1/nodes sorts by: an allow-list, so no request text reaches ORDER BY."""

DeviceType = enum.Enum("DeviceType", {t: t for t in devices.DEVICE_TYPES}, type=str)  # type: ignore[misc]  # as NodeOrder
ChangeOp = enum.Enum("ChangeOp", {op: op for op in devices.OPS}, type=str)  # type: ignore[misc]  # as NodeOrder

STATUS_COLORS = {"Ready": "green", "NotReady": "red", "Unknown": "yellow", "Deleted": "gray"}

Cluster = Annotated[str, Depends(params.cluster)]
Paged = Annotated[Page, Depends(params.page)]
Context = Annotated[params.Context, Depends(params.context)]
Now = Annotated[datetime.datetime, Depends(params.now)]
NodeName = Annotated[str, Path(min_length=1, max_length=253, description="The node's name.")]


def _gpu_node(row: nodes.NodeRecord) -> payloads.GpuNode:
    return payloads.GpuNode(
        name=row.name,
        ip=row.address,
        gpu_name=row.gpu_name,
        gpu_count=row.gpu_count,
        gpu_allocation=row.gpu_allocation,
        gpu_utilization=row.gpu_utilization,
        status=row.status,
        status_color=STATUS_COLORS.get(row.status, ""),
    )


def _times(count: int, what: str) -> str:
    """The original's "<count> X <model>", with an unknown model said so."""
    return f"{count} X {what or 'unknown'}"


def list_nodes(
    ctx: Context,
    cluster: Cluster,
    page: Paged,
    now: Now,
    judged: params.Judged,
    name: Annotated[str, Query(max_length=253, description="Name contains (any case).")] = "",
    gpu_name: Annotated[str, Query(max_length=253, description="GPU model contains.")] = "",
    status: Annotated[
        str, Query(max_length=1000, description="Comma-separated statuses, any of which.")
    ] = "",
    order_by: Annotated[NodeOrder, Query(description="Column to sort by.")] = NodeOrder["name"],
    desc: Annotated[bool, Query(description="Sort descending.")] = False,
) -> base.Envelope[payloads.NodeList]:
    """The GPU nodes, filtered, sorted and paginated (the original's list)."""
    statuses = tuple(s.strip() for s in status.split(",") if s.strip())
    wanted = nodes.NodeFilter(name=name, gpu_name=gpu_name, statuses=statuses)
    sort = nodes.NodeSort(column=order_by.value, descending=desc)
    found = nodes.list_nodes(ctx.db, cluster=cluster, wanted=wanted, sort=sort, page=page, now=now)
    known = freshness.read(ctx.db, cluster=cluster, figures=[freshness.NODES])
    when = payloads.NodeListMeasured(
        nodes=measured.of_freshness(known.get(freshness.NODES), judged),
        utilization=measured.of_minute(found.minute, judged),
    )
    rows = [_gpu_node(row) for row in found.rows]
    return envelope.ok(payloads.NodeList(data=rows, total=found.total, measured=when))


def get_node(
    ctx: Context, cluster: Cluster, name: NodeName, judged: params.Judged
) -> base.Envelope[payloads.GpuNodeDetail]:
    """One node; 404 when the cluster has no such node."""
    row = nodes.get_node(ctx.db, cluster=cluster, name=name)
    if row is None:
        raise NotFoundError(f"node {name}")
    known = freshness.read(ctx.db, cluster=cluster, figures=[freshness.NODES])
    detail = payloads.GpuNodeDetail(
        name=row.name,
        health=row.status,
        cpu=_times(row.cpu_count, row.cpu),
        memory=row.memory,
        os=row.os,
        gpu_driver_version=row.driver_version,
        static_gpu_details=_times(row.gpu_count, row.gpu_name),
        kubelet_version=row.kubelet_version,
        containerd_version=row.containerd_version,
        cpu_count=row.cpu_count,
        cpu_model=row.cpu or None,
        memory_bytes=row.memory_bytes,
        gpu_count=row.gpu_count,
        gpu_model=row.gpu_name,
        measured=measured.of_freshness(known.get(freshness.NODES), judged),
    )
    return envelope.ok(detail)


def gpu_devices(
    ctx: Context, cluster: Cluster, name: NodeName, now: Now
) -> base.Envelope[list[payloads.GpuDeviceInfo]]:
    """The GPUs on a node now, by index, with the figures of their latest minute (null: none
    recent); [] for a node without any; 404 for an unknown one."""
    found = devices.gpu_devices(ctx.db, cluster=cluster, node_name=name)
    if found is None:
        raise NotFoundError(f"node {name}")
    live = _live(ctx, cluster, name, len(found), now)
    shown = []
    for gpu in found:
        latest = live.get(gpu.uuid)
        utilization = None if latest is None else latest.utilization_ratio
        shown.append(
            payloads.GpuDeviceInfo(
                deviceId=gpu.gpu_id,
                uuid=gpu.uuid,
                model=gpu.gpu_model,
                memory=None if gpu.memory_mib is None else f"{gpu.memory_mib // 1024}GB",
                utilization=None if utilization is None else 100.0 * utilization,
                temperature=None if latest is None else latest.temperature_celsius,
                power=None if latest is None else latest.power_watts,
                health=gpu.health,
            )
        )
    return envelope.ok(shown)


def _live(
    ctx: Context, cluster: str, name: str, count: int, now: datetime.datetime
) -> dict[str, gpus.GpuRecord]:
    """The node's GPUs' latest fresh minutes, by uuid (as /v1/gpus reads them)."""
    if not count:
        return {}
    found = gpus.list_gpus(
        ctx.db,
        cluster=cluster,
        wanted=gpus.GpuFilter(node=name),
        sort=gpus.GpuSort(column="node"),
        page=Page(limit=count),
        now=now,
    )
    return {row.uuid: row for row in found.rows}


def changelog(
    ctx: Context,
    cluster: Cluster,
    page: Paged,
    name: NodeName,
    device_type: Annotated[DeviceType | None, Query(description="gpu or rdma.")] = None,
    op: Annotated[ChangeOp | None, Query(description="CREATE, UPDATE or DELETE.")] = None,
) -> base.Envelope[payloads.DeviceChangeList]:
    """A node's device changes, newest first (beyond the original, which wrote but never
    served them)."""
    wanted = devices.ChangelogFilter(
        device_type=device_type.value if device_type else "", op=op.value if op else ""
    )
    found = devices.changelog(ctx.db, cluster=cluster, node_name=name, wanted=wanted, page=page)
    if found is None:
        raise NotFoundError(f"node {name}")
    rows = [
        payloads.DeviceChange(
            device_type=row.device_type,
            device_name=row.device_name,
            device_uuid=row.device_uuid,
            op=row.op,
            changes=row.changes,
            created_at=int(row.created_at.timestamp()),
        )
        for row in found.rows
    ]
    return envelope.ok(payloads.DeviceChangeList(data=rows, total=found.total))


def router() -> APIRouter:
    api = APIRouter(prefix="/v1/nodes", tags=["nodes"], responses=envelope.ERROR_RESPONSES)
    # Routes match in order: the original's fixed paths (gpuAllocation, gpuUtilization...)
    # go before /{name}, or they would be taken for a node's name.
    api.add_api_route("", list_nodes, methods=["GET"])
    found = envelope.NOT_FOUND_RESPONSE
    api.add_api_route("/{name}", get_node, methods=["GET"], responses=found)
    api.add_api_route("/{name}/gpuDevices", gpu_devices, methods=["GET"], responses=found)
    api.add_api_route("/{name}/changelog", changelog, methods=["GET"], responses=found)
    return api
