"""The interactive API docs of `lens api` at /docs, and the package's web assets at /static: Swagger
UI from files vendored inside the package (static/vendor/, fetched by scripts/vendor-web-assets),
never from a CDN, because GPU clusters are often offline.

The page loads only scripts and styles of this server (a Content-Security-Policy says so).
"""

from __future__ import annotations

import json
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(__file__).parent / "static"
MANIFEST = STATIC / "vendor" / "vendored.json"
# Swagger UI draws its inline styles and images with data: URLs; scripts only from here.
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'"
)
OPEN_PATHS = ("/docs", "/docs/", "/openapi.json")  # with /static/: readable without a token


def vendored() -> dict[str, str]:
    """Each vendored npm package's version, by name (vendored.json)."""
    manifest = json.loads(MANIFEST.read_text())
    return {entry["name"]: entry["version"] for entry in manifest["packages"]}


async def _docs() -> FileResponse:
    return FileResponse(
        STATIC / "docs.html",
        media_type="text/html",
        headers={"Content-Security-Policy": POLICY},
    )


async def _slash() -> RedirectResponse:
    return RedirectResponse("../docs")


def install(app: FastAPI) -> None:
    """Serve /docs, /docs/ (redirected) and /static/... on `app`, outside the OpenAPI schema."""
    app.add_api_route("/docs", _docs, methods=["GET"], include_in_schema=False)
    app.add_api_route("/docs/", _slash, methods=["GET"], include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")


def is_open(path: str) -> bool:
    """Whether `path` is served without a bearer token: the docs page, the schema and the
    assets hold nothing of the cluster."""
    return path in OPEN_PATHS or path.startswith("/static/")
