"""/v1/clusters: the cluster overview, from the store (store/queries/clusters.py) in three
queries, never from the Kubernetes API or a kubelet per request (REFERENCE.md 15.3).
"""

from __future__ import annotations

import datetime
from typing import Annotated

from fastapi import APIRouter, Depends

from lens.roles.api import envelope
from lens.roles.api.routers import measured, params, workloads
from lens.roles.api.schemas import base
from lens.roles.api.schemas import clusters as payloads
from lens.store import freshness
from lens.store.queries import clusters

SOURCES = (freshness.NODES, freshness.PODS, freshness.STORAGE)


def overview_measured(
    figures: clusters.ClusterOverview,
    known: dict[str, freshness.Freshness],
    judged: datetime.datetime,
) -> payloads.OverviewMeasured:
    """When each group of the overview's figures was measured (`known`: the loops' records)."""
    return payloads.OverviewMeasured(
        nodes=measured.of_freshness(known.get(freshness.NODES), judged),
        allocation=measured.of_freshness(known.get(freshness.PODS), judged),
        utilization=measured.of_minute(figures.minute, judged),
        storage=measured.of_freshness(known.get(freshness.STORAGE), judged),
    )


def overview_payload(
    figures: clusters.ClusterOverview, when: payloads.OverviewMeasured
) -> payloads.ClusterOverview:
    # The original embedded its StorageStat in the overview: the same figures, flat.
    stat = workloads.storage_payload(figures.storage)
    return payloads.ClusterOverview(
        **stat.model_dump(),
        total_tx=None,
        total_rx=None,
        totalNodes=figures.total_nodes,
        healthyNodes=figures.healthy_nodes,
        faultyNodes=figures.faulty_nodes,
        fullyIdleNodes=figures.fully_idle_nodes,
        partiallyIdleNodes=figures.partially_idle_nodes,
        busyNodes=figures.busy_nodes,
        totalGpus=figures.total_gpus,
        allocatedGpus=figures.allocated_gpus,
        allocationRate=figures.allocation_percent,
        utilization=figures.utilization_percent,
        measured=when,
    )


def overview(
    ctx: Annotated[params.Context, Depends(params.context)],
    cluster: Annotated[str, Depends(params.cluster)],
    now: Annotated[datetime.datetime, Depends(params.now)],
    judged: params.Judged,
) -> base.Envelope[payloads.ClusterOverview]:
    """The cluster now: nodes healthy and faulty, idle and busy; GPUs held; storage; and when
    each was measured."""
    figures = clusters.overview(ctx.db, cluster=cluster, now=now)
    known = freshness.read(ctx.db, cluster=cluster, figures=SOURCES)
    return envelope.ok(overview_payload(figures, overview_measured(figures, known, judged)))


def router() -> APIRouter:
    api = APIRouter(prefix="/v1/clusters", tags=["clusters"], responses=envelope.ERROR_RESPONSES)
    api.add_api_route("/overview", overview, methods=["GET"])
    return api
