"""Workloads and what they run: /v1/workloads (list, detail, hierarchy, trainingPerformance),
/v1/workloadMetadata, /v1/nodes/{name}/workloads and workloadsHistory, /v1/clusters/consumers
and /v1/storage/stat, read through store/queries/ (workloads, nodeworkloads, hierarchy, training,
storage) and the jobs' consumers (lens/usage/consumers.py), shaped as the original's payloads
(REFERENCE.md 2.1).

/v1/workloads/{uid}/metrics is the series router's (series.py); app.py includes it first.
"""

from __future__ import annotations

import datetime
import enum
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from lens.roles.api import envelope
from lens.roles.api.envelope import NotFoundError, ParameterError
from lens.roles.api.routers import measured, params
from lens.roles.api.schemas import base
from lens.roles.api.schemas import workloads as payloads
from lens.roles.api.schemas.measured import Measured
from lens.store import freshness
from lens.store.queries import hierarchy, nodeworkloads, storage, training, workloads
from lens.store.queries.reading import Page, reading
from lens.store.queries.workloadhours import Held
from lens.store.queries.workloads import WorkloadRecord
from lens.usage import consumers

# The original's colours for its statuses (Done is Succeeded), and Lens's for the others.
STATUS_COLORS = {
    "Pending": "yellow",
    "Running": "green",
    "Succeeded": "blue",
    "Failed": "red",
    "Deleted": "gray",
}
# The original's status filter value, still understood.
STATUS_ALIASES = {"Done": "Succeeded"}
UNKNOWN_MODEL = "unknown"  # the key of GPU-seconds on GPUs whose model is not known
DEFAULT_SOURCE = "k8s"  # what a workload with no source came from (the original's default)
# The latest time a range may name, in unix ms: the end of year 9999, past which no datetime goes.
MAX_MILLISECONDS = 253_402_300_799_999

WorkloadOrder = enum.Enum(  # type: ignore[misc]  # the functional API: one list of allowed names
    "WorkloadOrder", {column: column for column in workloads.SORTABLE}, type=str
)
"""What /v1/workloads sorts by: an allow-list, so no request text reaches ORDER BY."""

WorkloadStatus = enum.Enum(  # type: ignore[misc]  # as WorkloadOrder
    "WorkloadStatus", {s: s for s in (*STATUS_COLORS, *STATUS_ALIASES)}, type=str
)


class SortOrder(enum.StrEnum):
    asc = "asc"
    desc = "desc"


Cluster = Annotated[str, Depends(params.cluster)]
Paged = Annotated[Page, Depends(params.page)]
Context = Annotated[params.Context, Depends(params.context)]
Now = Annotated[datetime.datetime, Depends(params.now)]
NodeName = Annotated[str, Path(min_length=1, max_length=253, description="The node's name.")]
Uid = Annotated[str, Path(min_length=1, max_length=64, description="The workload's uid.")]
Milliseconds = Annotated[int, Query(ge=0, le=MAX_MILLISECONDS, description="Unix ms.")]


def unix(at: datetime.datetime | None) -> int | None:
    return None if at is None else int(at.timestamp())


def gpu_allocation(held: Held | None) -> dict[str, float] | None:
    """The original's `{gpu_model: gpu_seconds}`."""
    if held is None:
        return None
    return {(h.gpu_model or UNKNOWN_MODEL): round(h.seconds, 3) for h in held}


def _item(row: WorkloadRecord) -> payloads.WorkloadListItem:
    return payloads.WorkloadListItem(
        kind=row.kind,
        name=row.name,
        namespace=row.namespace,
        uid=row.uid,
        gpu_allocated=row.gpu_request,
        gpu_allocation=gpu_allocation(row.gpu_seconds),
        status=row.status,
        status_reason=row.status_reason,
        status_color=STATUS_COLORS.get(row.status, ""),
        start_at=int(row.created_at.timestamp()),
        end_at=unix(row.end_at),
        source=row.source or DEFAULT_SOURCE,
    )


def list_workloads(
    ctx: Context,
    cluster: Cluster,
    page: Paged,
    judged: params.Judged,
    name: Annotated[str, Query(max_length=253, description="Name contains (any case).")] = "",
    kind: Annotated[str, Query(max_length=64, description="Kind, exactly.")] = "",
    namespace: Annotated[str, Query(max_length=64, description="Namespace, exactly.")] = "",
    status: Annotated[
        WorkloadStatus | None,
        Query(description="Pending, Running, Succeeded, Failed or Deleted (Done: Succeeded)."),
    ] = None,
    order_by: Annotated[WorkloadOrder, Query(description="What to sort by.")] = WorkloadOrder[
        "start_at"
    ],
    order: Annotated[SortOrder, Query(description="asc or desc.")] = SortOrder.desc,
) -> base.Envelope[payloads.WorkloadList]:
    """The top-level workloads, filtered, sorted and paginated (newest first by default)."""
    asked = status.value if status else ""
    wanted = workloads.WorkloadFilter(
        name=name, kind=kind, namespace=namespace, status=STATUS_ALIASES.get(asked, asked)
    )
    sort = workloads.WorkloadSort(column=order_by.value, descending=order is SortOrder.desc)
    found = workloads.list_workloads(ctx.db, cluster=cluster, wanted=wanted, sort=sort, page=page)
    known = freshness.read(ctx.db, cluster=cluster, figures=[freshness.PODS, freshness.GPU_HOURS])
    when = payloads.WorkloadListMeasured(
        status=measured.of_freshness(known.get(freshness.PODS), judged),
        gpu_hours=measured.of_freshness(known.get(freshness.GPU_HOURS), judged),
    )
    rows = [_item(row) for row in found.rows]
    return envelope.ok(payloads.WorkloadList(data=rows, total=found.total, measured=when))


def get_workload(
    ctx: Context, cluster: Cluster, uid: Uid
) -> base.Envelope[payloads.WorkloadDetail]:
    """One workload, at any level, with its pods; 404 for an unknown uid."""
    found = workloads.get_workload(ctx.db, cluster=cluster, uid=uid)
    if found is None:
        raise NotFoundError(f"workload {uid}")
    row = found.workload
    return envelope.ok(
        payloads.WorkloadDetail(
            apiVersion=row.group_version,
            kind=row.kind,
            name=row.name,
            namespace=row.namespace,
            uid=row.uid,
            gpu_allocation=gpu_allocation(row.gpu_seconds),
            status=row.status,
            status_reason=row.status_reason,
            status_color=STATUS_COLORS.get(row.status, ""),
            pods=[
                payloads.WorkloadPod(nodeName=p.node_name, podNamespace=p.namespace, podName=p.name)
                for p in found.pods
            ],
            startTime=int(row.created_at.timestamp()),
            endTime=unix(row.end_at),
            source=row.source or DEFAULT_SOURCE,
        )
    )


def _node(tree: hierarchy.WorkloadNode) -> payloads.WorkloadHierarchy:
    return payloads.WorkloadHierarchy(
        kind=tree.kind,
        name=tree.name,
        namespace=tree.namespace,
        uid=tree.uid,
        children=[_node(child) for child in tree.children],
    )


def get_hierarchy(
    ctx: Context, cluster: Cluster, uid: Uid
) -> base.Envelope[payloads.WorkloadHierarchy]:
    """The workload and the workloads below it, in one query; 404 for an unknown uid."""
    tree = hierarchy.workload_tree(ctx.db, cluster=cluster, uid=uid)
    if tree is None:
        raise NotFoundError(f"workload {uid}")
    return envelope.ok(_node(tree))


def _at(milliseconds: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(milliseconds / 1000, datetime.UTC)


def training_performance(
    ctx: Context, cluster: Cluster, uid: Uid, start: Milliseconds, end: Milliseconds
) -> list[payloads.TrainingPoint]:
    """The workload's training figures logged from `start` to `end` (unix ms, both included),
    oldest first, as a bare array (no envelope, as the original answered)."""
    if end <= start:
        raise ParameterError("end", "must be after start")
    try:
        found = training.training_points(
            ctx.db, cluster=cluster, uid=uid, start=_at(start), end=_at(end)
        )
    except training.TooManyRows as exc:
        limit = training.MAX_ROWS
        raise ParameterError(
            "start", f"the range holds over {limit} iterations; narrow it"
        ) from exc
    if found is None:
        raise NotFoundError(f"workload {uid}")
    return [
        payloads.TrainingPoint(
            metric=p.metric, value=p.value, timestamp=round(p.at.timestamp() * 1000)
        )
        for p in found
    ]


def workload_metadata(ctx: Context, cluster: Cluster) -> base.Envelope[payloads.WorkloadMetadata]:
    """The namespaces and kinds the workload list can be filtered on."""
    found = workloads.workload_metadata(ctx.db, cluster=cluster)
    return envelope.ok(
        payloads.WorkloadMetadata(namespaces=list(found.namespaces), kinds=list(found.kinds))
    )


def storage_payload(sums: storage.StorageTotals) -> payloads.StorageStat:
    """The original's StorageStat of the storage sums (also embedded in the overview)."""
    return payloads.StorageStat(
        total_space=sums.total_bytes,
        used_space=sums.used_bytes,
        usage_percentage=sums.usage_percent,
        total_inodes=sums.total_inodes,
        used_inodes=sums.used_inodes,
        inodes_usage_percentage=sums.inodes_usage_percent,
        read_bandwidth=None,
        write_bandwidth=None,
    )


def storage_stat(ctx: Context, cluster: Cluster) -> base.Envelope[payloads.StorageStat]:
    """The cluster's storage backends summed (the original read only the newest one)."""
    return envelope.ok(storage_payload(storage.storage_totals(ctx.db, cluster=cluster)))


def node_workloads(
    ctx: Context, cluster: Cluster, page: Paged, name: NodeName, judged: params.Judged
) -> base.Envelope[payloads.NodeWorkloadList]:
    """The top-level workloads with running GPU pods on the node, by name; 404 for an unknown
    node."""
    found = nodeworkloads.node_workloads(ctx.db, cluster=cluster, node_name=name, page=page)
    if found is None:
        raise NotFoundError(f"node {name}")
    rows = [
        payloads.NodeWorkload(
            kind=row.kind,
            name=row.name,
            namespace=row.namespace,
            uid=row.uid,
            gpu_allocated=row.gpus,
            gpu_allocated_node=row.gpus_on_node,
            node_name=name,
            status=row.status,
        )
        for row in found.rows
    ]
    return envelope.ok(
        payloads.NodeWorkloadList(
            data=rows, total=found.total, measured=_pods_measured(ctx, cluster, judged)
        )
    )


def node_history(
    ctx: Context, cluster: Cluster, page: Paged, name: NodeName
) -> base.Envelope[payloads.NodeWorkloadHistory]:
    """The GPU pods that ran on the node and ended, newest first; 404 for an unknown node."""
    found = nodeworkloads.node_history(ctx.db, cluster=cluster, node_name=name, page=page)
    if found is None:
        raise NotFoundError(f"node {name}")
    rows = [
        payloads.NodeWorkloadHistoryItem(
            kind=row.workload_kind,
            name=row.workload_name,
            namespace=row.workload_namespace,
            uid=row.workload_uid,
            gpu_allocated=row.gpus,
            pod_name=row.pod_name,
            pod_namespace=row.pod_namespace,
            start_time=int(row.created_at.timestamp()),
            end_time=unix(row.end_at),
        )
        for row in found.rows
    ]
    return envelope.ok(payloads.NodeWorkloadHistory(data=rows, total=found.total))


def _consumer(found: consumers.Consumer, pods: tuple[workloads.PodPlace, ...]) -> payloads.Consumer:
    ratio = found.utilization_ratio
    return payloads.Consumer(
        kind=found.kind,
        name=found.name,
        namespace=found.namespace,
        uid=found.uid,
        stat=payloads.ConsumerStat(
            gpu_request=found.gpus_allocated,
            gpu_utilization=None if ratio is None else 100.0 * ratio,
        ),
        pods=[
            payloads.WorkloadPod(nodeName=p.node_name, podNamespace=p.namespace, podName=p.name)
            for p in pods
        ],
        source=DEFAULT_SOURCE,
    )


def cluster_consumers(
    ctx: Context, cluster: Cluster, page: Paged, judged: params.Judged
) -> base.Envelope[payloads.ConsumerList]:
    """The top-level workloads with running GPU pods, most GPUs first, as the jobs' consumers
    count them: each pod once with its request, utilization from its own GPU-minutes."""
    since = ctx.now() - datetime.timedelta(minutes=ctx.consumers_window_minutes)
    with reading(ctx.db):
        groups = consumers.consumer_pods(cluster)
        groups.sort(key=lambda c: (-c.gpus_allocated, c.name, c.uid))
        # Only the page shown has its GPU-minutes read.
        shown = consumers.with_utilization(
            cluster, groups[page.offset : page.offset + page.limit], since=since
        )
    pods = workloads.running_pods(ctx.db, cluster=cluster, owners=[c.uid for c in shown])
    rows = [_consumer(c, pods.get(c.uid, ())) for c in shown]
    return envelope.ok(
        payloads.ConsumerList(
            data=rows, total=len(groups), measured=_pods_measured(ctx, cluster, judged)
        )
    )


def _pods_measured(ctx: Context, cluster: str, judged: datetime.datetime) -> Measured:
    """Figures of the controller's pods: as of its last heartbeat."""
    known = freshness.read(ctx.db, cluster=cluster, figures=[freshness.PODS])
    return measured.of_freshness(known.get(freshness.PODS), judged)


def router() -> APIRouter:
    api = APIRouter(tags=["workloads"], responses=envelope.ERROR_RESPONSES)
    found: dict[int | str, dict[str, object]] = {
        404: {"model": base.ErrorEnvelope, "description": "No such workload."}
    }
    api.add_api_route("/v1/workloads", list_workloads, methods=["GET"])
    api.add_api_route("/v1/workloads/{uid}", get_workload, methods=["GET"], responses=found)
    api.add_api_route(
        "/v1/workloads/{uid}/hierarchy", get_hierarchy, methods=["GET"], responses=found
    )
    api.add_api_route(
        "/v1/workloads/{uid}/trainingPerformance",
        training_performance,
        methods=["GET"],
        responses=found,
    )
    api.add_api_route("/v1/workloadMetadata", workload_metadata, methods=["GET"])
    api.add_api_route("/v1/storage/stat", storage_stat, methods=["GET"])
    # Paths of their own below /v1/nodes/{name}: no fixed path of the nodes router shadows them.
    node = envelope.NOT_FOUND_RESPONSE
    api.add_api_route("/v1/nodes/{name}/workloads", node_workloads, methods=["GET"], responses=node)
    api.add_api_route(
        "/v1/nodes/{name}/workloadsHistory", node_history, methods=["GET"], responses=node
    )
    api.add_api_route("/v1/clusters/consumers", cluster_consumers, methods=["GET"])
    return api
