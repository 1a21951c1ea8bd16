"""What every /v1 route shares: the cluster (default: this process's), the original's pagination
(`page_num`, `page_size`), the route's context (database, limits, clock) from the app, the rule
against control characters in any parameter, and those limits said in the OpenAPI schema.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
import time
from collections.abc import Callable
from typing import Annotated, Any

import peewee
from fastapi import Depends, Query, Request

from lens.roles.api.envelope import ParameterError
from lens.runtime import names
from lens.store.queries.reading import Page

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
PRINTABLE = r"^[^\x00-\x1f\x7f]*$"  # the same, as a pattern a schema declares
# Bounds the offset a page asks for, so that no request overflows the database's integers.
MAX_PAGE_NUM = 10_000_000


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """What the routes read, kept in the app's state by app.create_app."""

    db: peewee.Database
    cluster: str  # the cluster a request names none
    max_page_size: int
    wall_time: Callable[[], float] = time.time  # the process's clock
    # The window of the consumers' utilization: the jobs', so the API and the gauges agree.
    consumers_window_minutes: int = 5
    team_label: str = ""  # the label the jobs keep GPU-hours by (jobs.team_label)
    cors_origins: tuple[str, ...] = ("*",)  # api.cors_origins
    simulated: bool = False  # the cluster is `lens demo`'s
    # Seconds of wall_time in a second of real time, now: `lens demo`'s, which slows its clock
    # while the host cannot keep up with the speed asked.
    clock_rate: Callable[[], float] = lambda: 1.0

    def now(self) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self.wall_time(), datetime.UTC)


def context(request: Request) -> Context:
    found = request.app.state.context
    assert isinstance(found, Context)
    return found


def printable(request: Request) -> None:
    """No control character in any query or path parameter (an app-wide dependency): a NUL
    reaches no database (PostgreSQL refuses it) and no log line."""
    for name, value in [*request.query_params.multi_items(), *request.path_params.items()]:
        if _CONTROL.search(str(value)):
            raise ParameterError(name, "control characters are not allowed")


def now(request: Request) -> datetime.datetime:
    """Now by the process's clock (a dependency: tests override it)."""
    return context(request).now()


# Real seconds a loop may run late before its figures are called stale: a run delayed a moment
# by a busy host is not a source that stopped. Scaled by the clock's rate, since a loop's
# interval under `lens demo --speed 60` is a sixtieth of its real time.
STALE_SLACK_SECONDS = 5.0


def judged_now(
    request: Request, moment: Annotated[datetime.datetime, Depends(now)]
) -> datetime.datetime:
    """The moment figures' staleness is judged at: `now`, less STALE_SLACK_SECONDS of real
    time."""
    rate = context(request).clock_rate()
    return moment - datetime.timedelta(seconds=STALE_SLACK_SECONDS * rate)


Judged = Annotated[datetime.datetime, Depends(judged_now)]


def cluster(
    request: Request,
    cluster: Annotated[
        str | None,
        Query(
            description="The cluster whose rows are read; default: this one.",
            max_length=63,
            pattern=names.DNS_LABEL_PATTERN,
        ),
    ] = None,
) -> str:
    if cluster is None:
        return context(request).cluster
    if not names.is_dns_label(cluster):
        raise ParameterError("cluster", f"expected {names.DNS_LABEL}")
    return cluster


def page(
    request: Request,
    page_num: Annotated[int, Query(ge=1, le=MAX_PAGE_NUM, description="Page number, from 1.")] = 1,
    page_size: Annotated[
        int, Query(ge=1, description="Rows per page, at most api.max_page_size.")
    ] = 10,
) -> Page:
    most = context(request).max_page_size
    if page_size > most:
        raise ParameterError("page_size", f"Input should be less than or equal to {most}")
    return Page.numbered(page_num, page_size)


def declare_limits(openapi: dict[str, Any], most: int) -> dict[str, Any]:
    """`openapi` with what holds for every route said on each parameter: page_size at most the
    configured largest page (api.max_page_size, the process's, not the routes'), and no
    control character in any text (`printable`, an app-wide dependency). FastAPI's 422 goes:
    a refused parameter is a 400 in the envelope (envelope.py)."""
    schemas = openapi.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    for operations in openapi.get("paths", {}).values():
        for operation in operations.values():
            operation.get("responses", {}).pop("422", None)
            for parameter in operation.get("parameters", []):
                schema = parameter.setdefault("schema", {})
                if parameter.get("name") == "page_size" and parameter.get("in") == "query":
                    schema["maximum"] = most
                for text in _text_schemas(schema):
                    text.setdefault("pattern", PRINTABLE)
    return openapi


def _text_schemas(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The string schemas of a parameter's schema (itself, or the members of its anyOf)."""
    members = schema.get("anyOf", [schema])
    return [m for m in members if isinstance(m, dict) and m.get("type") == "string"]
