"""/v1/about: this API's version, its default cluster, the labels GPU-hours can be grouped by
and whether the cluster is simulated — what the dashboard shows and offers from it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

import lens
from lens.roles.api import envelope
from lens.roles.api.routers import params
from lens.roles.api.schemas import base
from lens.roles.api.schemas.about import About
from lens.store.queries import gpuhours


def about(
    ctx: Annotated[params.Context, Depends(params.context)],
    cluster: Annotated[str, Depends(params.cluster)],
) -> base.Envelope[About]:
    """What this API serves: its version, the cluster, GPU-hours' label keys."""
    kept = set(gpuhours.label_keys(ctx.db, cluster=cluster))
    if ctx.team_label:
        kept.add(ctx.team_label)
    return envelope.ok(
        About(
            version=lens.__version__,
            cluster=cluster,
            team_label=ctx.team_label,
            gpu_hours_labels=sorted(kept),
            simulated=ctx.simulated,
            now=ctx.wall_time(),
            clock_rate=ctx.clock_rate(),
            max_page_size=ctx.max_page_size,
        )
    )


def router() -> APIRouter:
    api = APIRouter(tags=["about"], responses=envelope.ERROR_RESPONSES)
    api.add_api_route("/v1/about", about, methods=["GET"])
    return api
