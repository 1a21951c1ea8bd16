"""Beyond the original: /v1/gpus (every GPU with its live figures and holder, gpus.py), /v1/idle
(idle GPUs now and over a range, idle.py), /v1/gpuHours (GPU-hours by workload, namespace or
label; CSV, gpuhours.py) — one router holding the three routes, which app.py includes.
"""

from __future__ import annotations

from fastapi import APIRouter

from lens.roles.api import envelope
from lens.roles.api.routers import gpuhours, gpus, idle


def router() -> APIRouter:
    # The routes are added to this router itself, not included from one per module: its
    # routes are what app.py labels the request metrics with.
    api = APIRouter(tags=["usage"], responses=envelope.ERROR_RESPONSES)
    for area in (gpus, idle, gpuhours):
        area.add_routes(api)
    return api
