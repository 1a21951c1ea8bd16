"""The web dashboard of `lens api` at `/`: one page (static/dashboard/index.html) whose scripts
(served under /ui/) read the same /v1 API every client reads, with its libraries vendored in
the package (static/vendor/, see docspage.py) — nothing from a CDN, no Node.js to install or
run it.

The page loads scripts, styles and data from this server only (a Content-Security-Policy says
so); it needs no token itself, its requests to /v1 carry the one the user gives it.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import Scope

ASSETS = Path(__file__).parent / "static" / "dashboard"
PAGE = ASSETS / "index.html"
REVALIDATE = {"Cache-Control": "no-cache"}
# Charts set inline styles from scripts (allowed by style-src 'self' through the CSSOM); the
# favicon is a data: URL so the browser asks for no /favicon.ico.
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)


async def _page() -> FileResponse:
    return FileResponse(
        PAGE,
        media_type="text/html",
        headers={"Content-Security-Policy": POLICY, **REVALIDATE},
    )


class _Revalidated(StaticFiles):
    """The page's own modules, asked again (a 304 while unchanged) on every load: a browser
    keeping some modules of an older Lens beside newer ones would break the page."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update(REVALIDATE)
        return response


def install(app: FastAPI) -> None:
    """Serve the dashboard at `/` and its modules under /ui/, outside the OpenAPI schema."""
    app.add_api_route("/", _page, methods=["GET"], include_in_schema=False)
    app.mount("/ui", _Revalidated(directory=ASSETS), name="ui")


def is_open(path: str) -> bool:
    """Whether `path` is the dashboard's page or one of its modules, served without a token
    (they hold no data)."""
    return path == "/" or path.startswith("/ui/")
