"""Time series of the GPUs from the GPU-minute and GPU-hour tables (resolution chosen from range
and step): /v1/nodes/{name}/gpuMetrics, /v1/nodes/gpuAllocation, /v1/nodes/gpuUtilization,
/v1/nodes/gpuUtilizationHistory, /v1/clusters/gpuHeatmap, /v1/workloads/{uid}/metrics.

Read through store/queries/series.py, seriesnow.py and seriesworkloads.py; never Prometheus,
so every path answers with none.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import Response

from lens.roles.api import envelope
from lens.roles.api.envelope import NotFoundError, ParameterError
from lens.roles.api.routers import measured, params
from lens.roles.api.schemas import base
from lens.roles.api.schemas import series as payloads
from lens.store import freshness
from lens.store.queries import series, seriesnow, seriesworkloads, timerange

Cluster = Annotated[str, Depends(params.cluster)]
Context = Annotated[params.Context, Depends(params.context)]
Epoch = Query(ge=0, le=timerange.LATEST_EPOCH, description="Unix seconds.")

# The original's heatmap axes: (serial, unit, yaxis_max, yaxis_min).
HEATMAP_AXES = {
    "utilization": (1, "%", 100.0, 0.0),
    "power": (2, "W", 850.0, 0.0),
    "temperature": (3, "℃", 110.0, 20.0),
}
NODE_NAME = "primus_lens_node_name"  # the label a workload chart's series names its node by


Now = Annotated[datetime.datetime, Depends(params.now)]


def span(
    start: Annotated[int, Epoch],
    end: Annotated[int, Epoch],
    step: Annotated[
        int,
        Query(
            ge=1,
            le=timerange.LATEST_EPOCH,
            description=f"Seconds per point; at most {timerange.MAX_POINTS} points a range.",
        ),
    ] = 60,
) -> timerange.TimeRange:
    """The range [start, end) in buckets of `step` seconds; 400 naming what is wrong."""
    try:
        return timerange.time_range(start=start, end=end, step=step)
    except timerange.RangeError as exc:
        raise ParameterError(exc.parameter, exc.problem) from exc


Span = Annotated[timerange.TimeRange, Depends(span)]


def _points(points: Iterable[series.Point]) -> list[payloads.TimePoint]:
    return [payloads.TimePoint(timestamp=p.timestamp, value=p.value) for p in points]


def _graph(serial: int, unit: str, lines: list[payloads.Series]) -> payloads.MetricsGraph:
    return payloads.MetricsGraph(
        serial=serial, series=lines, config=payloads.GraphConfig(y_axis_unit=unit)
    )


def gpu_metrics(
    ctx: Context,
    cluster: Cluster,
    window: Span,
    name: Annotated[str, Path(min_length=1, max_length=253, description="The node's name.")],
) -> base.Envelope[payloads.NodeGpuMetrics]:
    """A node's GPUs' utilization (a series per GPU) and its allocation, per step."""
    found = series.node_metrics(ctx.db, cluster=cluster, node_name=name, span=window)
    if found is None:
        raise NotFoundError(f"node {name}")
    per_gpu = [
        payloads.Series(labels={"gpu_id": str(gpu.gpu_index)}, values=_points(gpu.points))
        for gpu in found.utilization
    ]
    allocation = [payloads.Series(labels={}, values=_points(found.allocation))]
    return envelope.ok(
        payloads.NodeGpuMetrics(
            gpu_utilization=_graph(1, "%", per_gpu),
            gpu_allocation_rate=_graph(2, "%", allocation if found.allocation else []),
        )
    )


def gpu_allocation(ctx: Context, cluster: Cluster) -> base.Envelope[list[payloads.NodeAllocation]]:
    """Each node's GPUs held over its GPUs (nodes without GPUs, and deleted ones, left out)."""
    return envelope.ok(
        [
            payloads.NodeAllocation(
                node=row.node,
                vendor=row.vendor,
                capacity=row.capacity,
                allocated=row.allocated,
                allocationRate=row.rate,
            )
            for row in seriesnow.gpu_allocation(ctx.db, cluster=cluster)
        ]
    )


def gpu_utilization(
    ctx: Context, cluster: Cluster, now: Now, judged: params.Judged
) -> base.Envelope[payloads.ClusterUtilization]:
    """The cluster's allocation and its GPUs' mean utilization now."""
    found = seriesnow.cluster_utilization(ctx.db, cluster=cluster, now=now)
    known = freshness.read(ctx.db, cluster=cluster, figures=[freshness.NODES])
    when = payloads.ClusterUtilizationMeasured(
        allocation=measured.of_freshness(known.get(freshness.NODES), judged),
        utilization=measured.of_minute(found.minute, judged),
    )
    return envelope.ok(
        payloads.ClusterUtilization(
            allocationRate=found.allocation_percent,
            utilization=found.utilization_percent,
            measured=when,
        )
    )


def utilization_history(
    ctx: Context, cluster: Cluster, window: Span
) -> base.Envelope[payloads.UtilizationHistory]:
    """The cluster's allocation, utilization and VRAM utilization per step: one point per
    step for the cluster (the original concatenated every node's VRAM series into one list)."""
    try:
        found = series.cluster_history(ctx.db, cluster=cluster, span=window)
    except timerange.RangeError as exc:
        raise ParameterError(exc.parameter, exc.problem) from exc
    return envelope.ok(
        payloads.UtilizationHistory(
            allocationRate=_points(found.allocation),
            utilization=_points(found.utilization),
            vramUtilization=_points(found.vram),
        )
    )


def _heatmap(figure: str, cells: tuple[seriesnow.HeatCell, ...]) -> payloads.Heatmap:
    serial, unit, most, least = HEATMAP_AXES[figure]
    return payloads.Heatmap(
        serial=serial,
        unit=unit,
        yaxis_max=most,
        yaxis_min=least,
        Data=[
            payloads.HeatmapCell(
                node_name=c.node_name, gpu_id=c.gpu_index, value=c.value, held=c.held
            )
            for c in cells
        ],
    )


def gpu_heatmap(
    ctx: Context,
    cluster: Cluster,
    now: Now,
    judged: params.Judged,
    k: Annotated[
        int,
        Query(
            ge=1,
            le=seriesnow.MAX_TOP_NODES,
            description="Nodes per figure: the k highest by their GPUs' mean (the original: 5).",
        ),
    ] = 5,
) -> base.Envelope[payloads.ClusterHeatmap]:
    """The GPUs of the k nodes highest in power, temperature and utilization, each figure its
    own k, in the latest complete minute."""
    found = seriesnow.heatmap(ctx.db, cluster=cluster, now=now, k=k)
    return envelope.ok(
        payloads.ClusterHeatmap(
            power=_heatmap("power", found.power),
            temperature=_heatmap("temperature", found.temperature),
            utilization=_heatmap("utilization", found.utilization),
            measured=measured.of_minute(found.minute, judged),
        )
    )


def _values(points: Iterable[tuple[int, float]]) -> list[dict[str, object]]:
    """TimePoints as their model dumps them: the value a float (an iteration too)."""
    return [{"timestamp": timestamp, "value": float(value)} for timestamp, value in points]


def _per_node(found: tuple[seriesworkloads.NodeSeries, ...]) -> list[dict[str, object]]:
    return [
        {
            "labels": {NODE_NAME: line.node_name},
            "values": _values(zip(line.timestamps, line.values, strict=True)),
        }
        for line in found
    ]


def _training(points: tuple[seriesworkloads.TrainingPoint, ...]) -> list[dict[str, object]]:
    """The original's two series, named in the node label: tflops and iteration."""
    named = (
        ("tflops", _values((p.timestamp, p.tflops) for p in points if p.tflops is not None)),
        ("iteration", _values((p.timestamp, p.iteration) for p in points)),
    )
    return [{"labels": {NODE_NAME: n}, "values": v} for n, v in named if v]


def _chart(serial: int, unit: str, lines: list[dict[str, object]]) -> dict[str, object]:
    return {"serial": serial, "series": lines, "config": {"y_axis_unit": unit}}


def workload_metrics(
    ctx: Context,
    cluster: Cluster,
    window: Span,
    uid: Annotated[str, Path(min_length=1, max_length=64, description="The workload's uid.")],
) -> Response:
    """A workload's GPUs per node (utilization, VRAM, power) and its training performance."""
    found = seriesworkloads.workload_metrics(ctx.db, cluster=cluster, uid=uid, span=window)
    if found is None:
        raise NotFoundError(f"workload {uid}")
    # A day at 240 s is 8,640 points and more: written as payloads.WorkloadMetrics dumps them,
    # without its models (PERFORMANCE.md, `bench api`).
    return envelope.ok_json(
        {
            "GPU Utilization": _chart(1, "%", _per_node(found.utilization)),
            "GPU Memory Utilization": _chart(2, "%", _per_node(found.memory)),
            "GPU Power": _chart(3, "W", _per_node(found.power)),
            "TrainingPerformance": _chart(4, " ", _training(found.training)),
        }
    )


def _not_found(what: str) -> dict[int | str, dict[str, object]]:
    return {404: {"model": base.ErrorEnvelope, "description": f"No such {what}."}}


def router() -> APIRouter:
    api = APIRouter(tags=["series"], responses=envelope.ERROR_RESPONSES)
    # Included before nodes' router: /v1/nodes/gpuAllocation is no node named gpuAllocation.
    api.add_api_route("/v1/nodes/gpuAllocation", gpu_allocation, methods=["GET"])
    api.add_api_route("/v1/nodes/gpuUtilization", gpu_utilization, methods=["GET"])
    api.add_api_route("/v1/nodes/gpuUtilizationHistory", utilization_history, methods=["GET"])
    api.add_api_route(
        "/v1/nodes/{name}/gpuMetrics", gpu_metrics, methods=["GET"], responses=_not_found("node")
    )
    api.add_api_route("/v1/clusters/gpuHeatmap", gpu_heatmap, methods=["GET"])
    api.add_api_route(
        "/v1/workloads/{uid}/metrics",
        workload_metrics,
        methods=["GET"],
        response_model=base.Envelope[payloads.WorkloadMetrics],
        responses=_not_found("workload"),
    )
    return api
