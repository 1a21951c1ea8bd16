"""/v1/idle: GPUs held by a pod and idle (under the utilization floor for the window; the jobs
find them, docs/jobs.md) — those idle now, or every interval of a time range with its idle
minutes inside it — and the idle GPU-hours per namespace, through store/queries/idle.py.
"""

from __future__ import annotations

import datetime
import enum
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from lens.roles.api import envelope
from lens.roles.api.envelope import ParameterError
from lens.roles.api.routers import measured, params
from lens.roles.api.routers.gpus import workload_payload
from lens.roles.api.schemas import base
from lens.roles.api.schemas import usage as payloads
from lens.store import freshness
from lens.store.queries import idle
from lens.store.queries.reading import Page

IdleOrder = enum.Enum("IdleOrder", {column: column for column in idle.SORTABLE}, type=str)  # type: ignore[misc]  # the functional API: one list of allowed columns
"""The columns /v1/idle sorts by: an allow-list, so no request text reaches ORDER BY."""

MAX_RANGE = datetime.timedelta(days=366)
LATEST = 10**10  # unix seconds in 2286: bounds the times a request may name


def _seconds(moment: datetime.datetime) -> int:
    return int(moment.timestamp())


def idle_payload(row: idle.IdleRecord) -> payloads.IdleGpu:
    return payloads.IdleGpu(
        node=row.node_name,
        gpu_uuid=row.gpu_uuid,
        gpu_id=row.gpu_id,
        gpu_model=row.gpu_model,
        namespace=row.namespace,
        pod_name=row.pod_name,
        pod_uid=row.pod_uid,
        workload=workload_payload(row.workload),
        since=_seconds(row.started_at),
        until=_seconds(row.ended_at),
        minutes=row.minutes,
        minutes_in_range=row.minutes_in_range,
        utilization_percent=100.0 * row.utilization_mean_ratio,
        open=row.open,
    )


def time_range(start: int | None, end: int | None) -> idle.TimeRange | None:
    """The range asked, None for none; a 400 naming the parameter for a half or bad one."""
    if start is None and end is None:
        return None
    if start is None:
        raise ParameterError("start", "required with end")
    if end is None:
        raise ParameterError("end", "required with start")
    if end <= start:
        raise ParameterError("end", "must be after start")
    if end - start > MAX_RANGE.total_seconds():
        raise ParameterError("end", f"the range is at most {MAX_RANGE.days} days")
    return idle.TimeRange(
        start=datetime.datetime.fromtimestamp(start, datetime.UTC),
        end=datetime.datetime.fromtimestamp(end, datetime.UTC),
    )


Seconds = Annotated[
    int | None,
    Query(ge=0, le=LATEST, description="Unix seconds; start and end together ask for a range."),
]


def list_idle(
    ctx: Annotated[params.Context, Depends(params.context)],
    cluster: Annotated[str, Depends(params.cluster)],
    page: Annotated[Page, Depends(params.page)],
    judged: params.Judged,
    start: Seconds = None,
    end: Seconds = None,
    namespace: Annotated[str, Query(max_length=63, description="This namespace only.")] = "",
    node: Annotated[str, Query(max_length=253, description="This node only.")] = "",
    order_by: Annotated[IdleOrder, Query(description="Column to sort by.")] = IdleOrder["since"],
    desc: Annotated[bool, Query(description="Sort descending.")] = False,
) -> base.Envelope[payloads.IdleList]:
    """Idle GPUs now (the intervals still open), or with `start` and `end` every interval
    overlapping [start, end) with its idle minutes inside it; and per namespace the intervals
    and idle GPU-hours over every interval matching."""
    during = time_range(start, end)
    found = idle.list_idle(
        ctx.db,
        cluster=cluster,
        wanted=idle.IdleFilter(namespace=namespace, node=node),
        sort=idle.IdleSort(column=order_by.value, descending=desc),
        page=page,
        during=during,
    )
    namespaces = [
        payloads.NamespaceIdle(
            namespace=n.namespace, intervals=n.intervals, idle_gpu_hours=n.idle_minutes / 60.0
        )
        for n in found.namespaces
    ]
    known = freshness.read(ctx.db, cluster=cluster, figures=[freshness.IDLE])
    listed = payloads.IdleList(
        data=[idle_payload(row) for row in found.rows],
        total=found.total,
        namespaces=namespaces,
        start=start if during else None,
        end=end if during else None,
        measured=measured.of_freshness(known.get(freshness.IDLE), judged),
    )
    return envelope.ok(listed)


def add_routes(api: APIRouter) -> None:
    """/v1/idle on `api` (usage.py's router)."""
    api.add_api_route("/v1/idle", list_idle, methods=["GET"])
