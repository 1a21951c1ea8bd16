"""The usage router holds the three routes beyond the original, each a GET with the cluster
and pagination parameters every list has, as its own routes (app.py labels the request
metrics with them)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.routing import APIRoute

from lens.roles.api.routers import usage


def test_the_three_routes_are_the_routers_own() -> None:
    made = usage.router()
    assert [(r.path, r.methods) for r in made.routes if isinstance(r, APIRoute)] == [
        ("/v1/gpus", {"GET"}),
        ("/v1/idle", {"GET"}),
        ("/v1/gpuHours", {"GET"}),
    ]
    assert len(made.routes) == 3


def test_their_parameters_and_tag() -> None:
    app = FastAPI()
    app.include_router(usage.router())
    paths = app.openapi()["paths"]
    assert sorted(paths) == ["/v1/gpuHours", "/v1/gpus", "/v1/idle"]
    for path, operations in paths.items():
        assert list(operations) == ["get"], path
        names = {p["name"] for p in operations["get"]["parameters"]}
        assert {"cluster", "page_num", "page_size", "order_by", "desc"} <= names, path
        assert operations["get"]["tags"] == ["usage"]
        assert {"200", "400", "401", "503"} <= set(operations["get"]["responses"]), path
