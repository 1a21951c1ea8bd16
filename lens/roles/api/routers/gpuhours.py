"""/v1/gpuHours: GPU-hours held, used and measured per namespace, top-level workload or team
label, by GPU model, summed over whole UTC days of gpu_hours_daily (store/queries/gpuhours.py)
— for chargeback, as JSON or, with `Accept: text/csv`, as the daily report's CSV columns
(lens/usage/dailyreport.py) with the range in place of the day.
"""

from __future__ import annotations

import csv
import datetime
import enum
import io
import re
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from lens.roles.api import envelope
from lens.roles.api.envelope import ParameterError
from lens.roles.api.routers import measured, params
from lens.roles.api.routers.gpus import workload_payload
from lens.roles.api.schemas import base
from lens.roles.api.schemas import usage as payloads
from lens.store import freshness
from lens.store.queries import gpuhours
from lens.store.queries.reading import Page
from lens.usage import dailyreport

HoursOrder = enum.Enum("HoursOrder", {column: column for column in gpuhours.SORTABLE}, type=str)  # type: ignore[misc]  # the functional API: one list of allowed columns
"""The columns /v1/gpuHours sorts by: an allow-list, so no request text reaches ORDER BY."""

MAX_DAYS = 1000
EARLIEST = datetime.date(1970, 1, 1)
CSV = "text/csv"
CSV_MEDIA_TYPE = "text/csv; charset=utf-8"
# The daily report's columns, its day replaced by the range's first and last days.
CSV_COLUMNS = ("start", "end", *(c for c in dailyreport.COLUMNS if c != "day"))
_GROUP_BY = "workload, namespace or label:<key>"


def group_by_of(text: str) -> gpuhours.GroupBy:
    """`workload`, `namespace` or `label:<key>`; a 400 naming group_by for anything else."""
    kind, _, key = text.partition(":")
    if kind == gpuhours.LABEL and key:
        return gpuhours.GroupBy(kind=kind, key=key)
    if kind in (gpuhours.NAMESPACE, gpuhours.WORKLOAD) and not key and ":" not in text:
        return gpuhours.GroupBy(kind=kind)
    raise ParameterError("group_by", f"expected {_GROUP_BY}")


def days_of(start: datetime.date, end: datetime.date) -> gpuhours.Days:
    if start < EARLIEST:
        raise ParameterError("start", f"must be {EARLIEST.isoformat()} or later")
    if end < start:
        raise ParameterError("end", "must not be before start")
    if (end - start).days + 1 > MAX_DAYS:
        raise ParameterError("end", f"the range is at most {MAX_DAYS} days")
    return gpuhours.Days(first=start, last=end)


def _accepted(accept: str) -> dict[str, float]:
    """Each media range of an Accept header with its quality."""
    ranges: dict[str, float] = {}
    for part in accept.split(","):
        media, *options = (p.strip() for p in part.split(";"))
        weight = 1.0
        for option in options:
            name, _, value = option.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        ranges[media.lower()] = weight
    return ranges


def _preference(ranges: dict[str, float], media: str) -> tuple[float, int]:
    """`media`'s quality, from the most specific range naming it, and that specificity."""
    kind = media.split("/")[0]
    for specificity, name in ((2, media), (1, f"{kind}/*"), (0, "*/*")):
        if name in ranges:
            return ranges[name], specificity
    return 0.0, 0


def wants_csv(accept: str | None) -> bool:
    """Whether Accept prefers text/csv to JSON: a higher quality, or the same one named more
    precisely (`text/csv, */*`). JSON otherwise, and when no Accept is sent."""
    ranges = _accepted(accept or "")
    csv_q, csv_specific = _preference(ranges, CSV)
    json_q, json_specific = _preference(ranges, "application/json")
    return csv_q > 0 and (csv_q, csv_specific) > (json_q, json_specific)


def row_payload(row: gpuhours.GroupHours) -> payloads.GpuHoursRow:
    return payloads.GpuHoursRow(
        group=payloads.GpuHoursGroup(
            kind=row.kind, key=row.key, value=row.value, workload=workload_payload(row.workload)
        ),
        gpu_model=row.gpu_model,
        held_gpu_hours=row.held_gpu_hours,
        used_gpu_hours=row.used_gpu_hours,
        measured_gpu_hours=row.measured_gpu_hours,
    )


def render_csv(listed: payloads.GpuHoursList) -> str:
    """RFC 4180 CSV with a header, as the daily report writes it (hours with six decimals)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for row in listed.data:
        named = row.group.workload
        fields = {
            "start": listed.start.isoformat(),
            "end": listed.end.isoformat(),
            "group_kind": row.group.kind,
            "group_key": row.group.key,
            "group_value": row.group.value,
            "workload_kind": named.kind if named else "",
            "workload_namespace": named.namespace if named else "",
            "workload_name": named.name if named else "",
            "gpu_model": row.gpu_model,
            "held_gpu_hours": f"{row.held_gpu_hours:.6f}",
            "used_gpu_hours": f"{row.used_gpu_hours:.6f}",
            "measured_gpu_hours": f"{row.measured_gpu_hours:.6f}",
        }
        writer.writerow([fields[column] for column in CSV_COLUMNS])
    return out.getvalue()


def csv_filename(cluster: str, group_by: gpuhours.GroupBy, days: gpuhours.Days) -> str:
    """gpu-hours-<cluster>-<first>-<last>-<kind>[-<label key>].csv, in characters a
    Content-Disposition header carries unquoted."""
    by = group_by.kind + (f"-{group_by.key}" if group_by.key else "")
    name = f"gpu-hours-{cluster}-{days.first}-{days.last}-{by}.csv"
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def _check_label(ctx: params.Context, cluster: str, group_by: gpuhours.GroupBy) -> None:
    if group_by.kind != gpuhours.LABEL:
        return
    if group_by.key == ctx.team_label:  # kept by the jobs, even before a row is summed
        return
    kept = gpuhours.label_keys(ctx.db, cluster=cluster)
    if group_by.key not in kept:
        labels = ", ".join(kept) or "none (jobs.team_label is empty, or nothing summed yet)"
        raise ParameterError("group_by", f"GPU-hours are kept by these labels only: {labels}")


def gpu_hours(
    request: Request,
    response: Response,
    ctx: Annotated[params.Context, Depends(params.context)],
    cluster: Annotated[str, Depends(params.cluster)],
    page: Annotated[Page, Depends(params.page)],
    judged: params.Judged,
    start: Annotated[datetime.date, Query(description="First UTC day (YYYY-MM-DD).")],
    end: Annotated[datetime.date, Query(description="Last UTC day (YYYY-MM-DD), included.")],
    group_by: Annotated[
        str,
        Query(
            max_length=len("label:") + gpuhours.MAX_LABEL_KEY,
            description=f"{_GROUP_BY} (the team label).",
        ),
    ] = gpuhours.NAMESPACE,
    order_by: Annotated[HoursOrder, Query(description="Column to sort by.")] = HoursOrder[
        "held_gpu_hours"
    ],
    desc: Annotated[bool, Query(description="Sort descending (the default).")] = True,
) -> base.Envelope[payloads.GpuHoursList] | Response:
    """GPU-hours per group and GPU model summed over the UTC days start through end (most
    held first); with `Accept: text/csv` every row as CSV, page_num and page_size unused."""
    grouping = group_by_of(group_by)
    days = days_of(start, end)
    _check_label(ctx, cluster, grouping)
    # Not a declared parameter: OpenAPI ignores an `Accept` header parameter; the two media
    # types of the 200 answer say it.
    as_csv = wants_csv(request.headers.get("accept"))
    found = gpuhours.gpu_hours(
        ctx.db,
        cluster=cluster,
        group_by=grouping,
        days=days,
        sort=gpuhours.HoursSort(column=order_by.value, descending=desc),
        page=None if as_csv else page,
    )
    known = freshness.read(ctx.db, cluster=cluster, figures=[freshness.GPU_HOURS])
    listed = payloads.GpuHoursList(
        data=[row_payload(row) for row in found.rows],
        total=found.total,
        start=start,
        end=end,
        measured=measured.of_freshness(known.get(freshness.GPU_HOURS), judged),
    )
    # The same URL answers JSON or CSV by Accept: a cache must keep them apart.
    if not as_csv:
        response.headers["Vary"] = "Accept"
        return envelope.ok(listed)
    disposition = f'attachment; filename="{csv_filename(cluster, grouping, days)}"'
    return Response(
        render_csv(listed),
        media_type=CSV_MEDIA_TYPE,
        headers={"Content-Disposition": disposition, "Vary": "Accept"},
    )


_CSV_RESPONSE: dict[int | str, dict[str, object]] = {
    200: {
        "description": "The rows as JSON, or with `Accept: text/csv` as CSV (RFC 4180, a "
        "header line, one row per group and GPU model).",
        "content": {CSV: {"schema": {"type": "string"}}},
        "headers": {
            "Content-Disposition": {
                "description": "CSV only: attachment; filename=gpu-hours-....csv",
                "schema": {"type": "string"},
            }
        },
    }
}


def add_routes(api: APIRouter) -> None:
    """/v1/gpuHours on `api` (usage.py's router), answering JSON or CSV."""
    api.add_api_route(
        "/v1/gpuHours",
        gpu_hours,
        methods=["GET"],
        response_model=base.Envelope[payloads.GpuHoursList],
        responses=_CSV_RESPONSE,
    )
