"""Requests counted and timed by route template, method and status — 401s and 404s too — with
no value of a request in any label."""

from __future__ import annotations

from pathlib import Path

import peewee

from lens.roles.api import auth
from lens.roles.api.requestmetrics import RequestMetrics
from lens.runtime.selfmetrics import SelfMetrics
from tests.roles.api.conftest import make_client


def _counts(metrics: SelfMetrics) -> dict[tuple[str, str, str], float]:
    return {
        (s.labels["route"], s.labels["method"], s.labels["status"]): s.value
        for family in metrics.registry.collect()
        for s in family.samples
        if s.name == "lens_api_requests_total"
    }


def test_requests_by_route_template_method_and_status(sqlite_db: peewee.Database) -> None:
    registry = SelfMetrics(process=False)
    client = make_client(sqlite_db, metrics=RequestMetrics(registry))
    client.get("/v1/nodes")
    client.get("/v1/nodes")
    client.get("/v1/nodes/gpu-secret-name")
    client.get("/v1/nodes?page_size=0")
    client.get("/no/such/path/abc")
    client.request("BREW", "/v1/nodes")
    assert _counts(registry) == {
        ("/v1/nodes", "GET", "200"): 2,
        ("/v1/nodes/{name}", "GET", "404"): 1,
        ("/v1/nodes", "GET", "400"): 1,
        ("other", "GET", "404"): 1,
        ("/v1/nodes", "other", "405"): 1,
    }
    durations = [
        s
        for family in registry.registry.collect()
        for s in family.samples
        if s.name == "lens_api_request_duration_seconds_count"
    ]
    assert {s.labels["route"]: s.value for s in durations}["/v1/nodes"] == 4


def test_refused_requests_count_under_their_route(
    sqlite_db: peewee.Database, tmp_path: Path
) -> None:
    path = tmp_path / "tokens"
    path.write_text("0" * 64 + "\n")
    registry = SelfMetrics(process=False)
    authenticator = auth.Authenticator(digests=auth.configured(str(path), key="api.token_file"))
    client = make_client(sqlite_db, metrics=RequestMetrics(registry), tokens=authenticator)
    client.get("/v1/nodes/x/gpuDevices", headers={"Authorization": "Bearer nope"})
    assert _counts(registry) == {("/v1/nodes/{name}/gpuDevices", "GET", "401"): 1}
