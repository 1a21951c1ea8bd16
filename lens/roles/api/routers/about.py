"""/v1/about: this API's version, its default cluster, the labels GPU-hours can be grouped by,
whether the cluster is simulated and when each source of its figures last fed them — what the
dashboard shows and offers from it."""

from __future__ import annotations

import datetime
from typing import Annotated

import peewee
from fastapi import APIRouter, Depends

import lens
from lens.roles.api import envelope
from lens.roles.api.routers import measured, params
from lens.roles.api.schemas import base
from lens.roles.api.schemas.about import About, Sources
from lens.roles.api.schemas.measured import Measured
from lens.store import freshness
from lens.store.queries import gpuhours, seriesnow


def sources(db: peewee.Database, cluster: str, judged: datetime.datetime) -> Sources:
    """When each source of `cluster`'s figures last reported, stale as judged at `judged`."""
    known = freshness.read(
        db,
        cluster=cluster,
        figures=[freshness.PODS, freshness.NODES, freshness.IDLE, freshness.GPU_HOURS],
    )
    newest = seriesnow.newest_minute(db, cluster=cluster, now=judged)
    return Sources(
        controller=measured.of_freshness(known.get(freshness.PODS), judged),
        node_info=measured.of_freshness(known.get(freshness.NODES), judged),
        agents=Measured(
            as_of=None if newest is None else int(newest.timestamp()),
            stale=newest is None or seriesnow.readings_stale(newest, judged),
        ),
        idle=measured.of_freshness(known.get(freshness.IDLE), judged),
        gpu_hours=measured.of_freshness(known.get(freshness.GPU_HOURS), judged),
    )


def about(
    ctx: Annotated[params.Context, Depends(params.context)],
    cluster: Annotated[str, Depends(params.cluster)],
    judged: params.Judged,
) -> base.Envelope[About]:
    """What this API serves: its version, the cluster, GPU-hours' label keys, and when what
    feeds its figures last did."""
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
            sources=sources(ctx.db, cluster, judged),
        )
    )


def router() -> APIRouter:
    api = APIRouter(tags=["about"], responses=envelope.ERROR_RESPONSES)
    api.add_api_route("/v1/about", about, methods=["GET"])
    return api
