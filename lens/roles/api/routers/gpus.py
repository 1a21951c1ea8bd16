"""/v1/gpus: every GPU of the cluster with its live figures (its latest GPU-minute) and the pod
holding it, read through store/queries/gpus.py — beyond the original, which had no such list.
"""

from __future__ import annotations

import enum
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from lens.roles.api import envelope
from lens.roles.api.routers import params
from lens.roles.api.schemas import base
from lens.roles.api.schemas import usage as payloads
from lens.store.queries import gpus
from lens.store.queries.reading import Page

GpuOrder = enum.Enum("GpuOrder", {column: column for column in gpus.SORTABLE}, type=str)  # type: ignore[misc]  # the functional API: one list of allowed columns
"""The columns /v1/gpus sorts by: an allow-list, so no request text reaches ORDER BY."""


def workload_payload(found: gpus.Workload | None) -> payloads.Workload | None:
    if found is None:
        return None
    return payloads.Workload(
        uid=found.uid, kind=found.kind, name=found.name, namespace=found.namespace
    )


def _holder(holder: gpus.Holder) -> payloads.GpuHolder:
    return payloads.GpuHolder(
        namespace=holder.namespace,
        pod_name=holder.pod_name,
        pod_uid=holder.pod_uid,
        containers=list(holder.containers),
        held_seconds=holder.held_seconds,
        workload=workload_payload(holder.workload),
    )


def gpu_payload(row: gpus.GpuRecord) -> payloads.Gpu:
    ratio, used = row.utilization_ratio, row.vram_used_bytes
    return payloads.Gpu(
        node=row.node_name,
        gpu_id=row.gpu_id,
        uuid=row.uuid,
        model=row.gpu_model,
        memory_total_bytes=row.vram_bytes,
        as_of=None if row.minute is None else int(row.minute.timestamp()),
        utilization_percent=None if ratio is None else 100.0 * ratio,
        memory_used_bytes=None if used is None else round(used),
        power_watts=row.power_watts,
        temperature_celsius=row.temperature_celsius,
        holder=_holder(row.holders[0]) if row.holders else None,
        holder_pods=len(row.holders),
    )


def list_gpus(
    ctx: Annotated[params.Context, Depends(params.context)],
    cluster: Annotated[str, Depends(params.cluster)],
    page: Annotated[Page, Depends(params.page)],
    node: Annotated[str, Query(max_length=253, description="This node's GPUs only.")] = "",
    model: Annotated[str, Query(max_length=128, description="Model contains (any case).")] = "",
    holder_namespace: Annotated[
        str,
        Query(max_length=63, description="Held now by a pod of this namespace."),
    ] = "",
    order_by: Annotated[GpuOrder, Query(description="Column to sort by.")] = GpuOrder["node"],
    desc: Annotated[bool, Query(description="Sort descending.")] = False,
) -> base.Envelope[payloads.GpuList]:
    """Every GPU of the cluster's nodes (not Deleted) with its latest minute's figures and
    holder, filtered, sorted (unknown figures last) and paginated."""
    found = gpus.list_gpus(
        ctx.db,
        cluster=cluster,
        wanted=gpus.GpuFilter(node=node, model=model, holder_namespace=holder_namespace),
        sort=gpus.GpuSort(column=order_by.value, descending=desc),
        page=page,
        now=ctx.now(),
    )
    rows = [gpu_payload(row) for row in found.rows]
    return envelope.ok(payloads.GpuList(data=rows, total=found.total))


def add_routes(api: APIRouter) -> None:
    """/v1/gpus on `api` (usage.py's router)."""
    api.add_api_route("/v1/gpus", list_gpus, methods=["GET"])
