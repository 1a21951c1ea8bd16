"""The FastAPI app of `lens api`, made by `create_app` (no module-level app, STYLE S9.3): the
routers, the docs page and its assets, the envelope's error handlers and the ASGI middleware,
outermost first: request metrics, CORS, error containment, authentication (when tokens are
asked for), gzip, conditional GETs (ETag).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.routing import BaseRoute

import lens
from lens.roles.api import auth, caching, dashboard, docspage, envelope
from lens.roles.api.requestmetrics import MeasureRequests, RequestMetrics
from lens.roles.api.routers import about, clusters, nodes, params, series, usage, workloads

DESCRIPTION = (
    "Lens's REST API: the original Primus-Lens paths and payloads, read from Lens's tables, "
    "with real HTTP status codes. Every answer is `{meta: {code, message}, data, tracing}`, "
    "but for the original's bare trainingPerformance array and CSV when asked for."
)
GZIP_MINIMUM_BYTES = 1024  # smaller answers gain less than the compression costs


def api_routers() -> tuple[APIRouter, ...]:
    """The /v1 routers in the order their routes match: the fixed paths under /v1/nodes
    (gpuAllocation...) before nodes' /v1/nodes/{name}, which would take them for a name."""
    return (
        series.router(),
        workloads.router(),
        usage.router(),
        nodes.router(),
        clusters.router(),
        about.router(),
    )


def _is_open(path: str) -> bool:
    return docspage.is_open(path) or dashboard.is_open(path)


def create_app(
    *, context: params.Context, metrics: RequestMetrics, tokens: auth.Authenticator | None
) -> FastAPI:
    """The app serving /v1, /openapi.json and /docs; `tokens` None serves without
    authentication (main.py allows it on loopback only)."""
    app = FastAPI(
        title="Lens API",
        version=lens.__version__,
        description=DESCRIPTION,
        docs_url=None,  # docspage.py serves it from the package's assets, not a CDN
        redoc_url=None,
        dependencies=[Depends(params.printable)],
    )
    app.state.context = context

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            made = FastAPI.openapi(app)
            app.openapi_schema = params.declare_limits(made, context.max_page_size)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented override
    routes: list[BaseRoute] = []
    for made in api_routers():
        app.include_router(made)
        routes.extend(made.routes)
    docspage.install(app)
    dashboard.install(app)
    routes.extend(r for r in app.router.routes if hasattr(r, "path"))  # docs, dashboard, assets
    envelope.install_handlers(app)
    # add_middleware wraps what was added before: the last added runs first.
    app.add_middleware(caching.ConditionalGet)
    app.add_middleware(GZipMiddleware, minimum_size=GZIP_MINIMUM_BYTES)
    if tokens is not None:
        app.add_middleware(auth.RequireToken, authenticator=tokens, open_path=_is_open)
    app.add_middleware(envelope.ContainErrors)
    if context.cors_origins:
        # Outside the tokens: a browser's preflight carries none.
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(context.cors_origins),
            allow_methods=["GET"],
            allow_headers=["Authorization", "If-None-Match"],
            expose_headers=["ETag", "Content-Disposition"],
        )
    app.add_middleware(MeasureRequests, metrics=metrics, routes=routes)
    return app
