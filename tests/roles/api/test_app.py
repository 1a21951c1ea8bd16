"""The app as composed: routes not shadowed by /v1/nodes/{name}, every /v1 route in the schema
with its error answers, gzip for large answers, errors in the envelope whatever the layer."""

from __future__ import annotations

from pathlib import Path

import peewee
import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from lens.roles.api import auth, docspage
from lens.roles.api.app import GZIP_MINIMUM_BYTES, api_routers
from tests.roles.api.conftest import error, make_client, node, write_nodes


def _routes() -> list[APIRoute]:
    return [r for made in api_routers() for r in made.routes if isinstance(r, APIRoute)]


def test_fixed_paths_under_nodes_come_before_a_nodes_name() -> None:
    paths = [r.path for r in _routes()]
    by_name = paths.index("/v1/nodes/{name}")
    fixed = [p for p in paths if p.count("/") == 3 and p.startswith("/v1/nodes/") and "{" not in p]
    assert all(paths.index(p) < by_name for p in fixed), fixed


def test_every_v1_route_is_in_the_schema_with_its_errors(sqlite_client: TestClient) -> None:
    schema = sqlite_client.get("/openapi.json").json()
    for route in _routes():
        if not route.path.startswith("/v1/"):
            continue
        answers = schema["paths"][route.path]["get"]["responses"]
        assert {"200", "400", "401", "403", "503"} <= set(answers), route.path
        assert "422" not in answers, route.path  # a refused parameter is a 400, not FastAPI's
    assert "/docs" not in schema["paths"]


def test_large_answers_are_gzipped(sqlite_db: peewee.Database, sqlite_client: TestClient) -> None:
    write_nodes(sqlite_db, *(node(f"gpu-node-{i:03}") for i in range(40)))
    plain = sqlite_client.get("/v1/nodes?page_size=40", headers={"Accept-Encoding": "identity"})
    assert len(plain.content) > GZIP_MINIMUM_BYTES and "content-encoding" not in plain.headers
    packed = sqlite_client.get("/v1/nodes?page_size=40", headers={"Accept-Encoding": "gzip"})
    assert packed.headers["content-encoding"] == "gzip"
    assert packed.json() == plain.json()
    bundle = "/static/vendor/swagger-ui-dist/swagger-ui-bundle.js"
    script = sqlite_client.get(bundle, headers={"Accept-Encoding": "gzip"})
    assert script.headers["content-encoding"] == "gzip"
    assert len(script.content) == (docspage.STATIC / bundle.removeprefix("/static/")).stat().st_size


def test_an_unknown_path_and_method_answer_in_the_envelope(sqlite_client: TestClient) -> None:
    assert error(sqlite_client.get("/v2/anything"), 404) == "no such path"
    assert error(sqlite_client.post("/v1/nodes"), 405, code=4016) == "Method Not Allowed"


@pytest.mark.parametrize(
    ("path", "parameter"),
    [
        ("/v1/nodes?name=a%00b", "name"),
        ("/v1/nodes/gpu%00-1", "name"),
        ("/v1/workloads?namespace=ml%0a", "namespace"),
        ("/v1/nodes?unknown=%01", "unknown"),
    ],
)
def test_a_control_character_anywhere_is_a_400_naming_its_parameter(
    client: TestClient, path: str, parameter: str
) -> None:
    # A NUL reached PostgreSQL, whose driver refused it with an error that became a 500.
    assert error(client.get(path), 400) == f"{parameter}: control characters are not allowed"


def test_browsers_of_the_allowed_origins_may_call_it(
    sqlite_db: peewee.Database, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("a" * 64 + "\n")
    authenticator = auth.Authenticator(digests=auth.configured(str(tokens), key="k"))
    client = make_client(sqlite_db, tokens=authenticator, cors_origins=("https://grafana.example",))
    preflight = client.options(
        "/v1/nodes",
        headers={
            "Origin": "https://grafana.example",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization",
        },
    )
    # Answered before the tokens: a preflight carries none.
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://grafana.example"
    refused = client.get("/v1/nodes", headers={"Origin": "https://grafana.example"})
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == "https://grafana.example"
    other = client.get("/v1/nodes", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers
    closed = make_client(sqlite_db, cors_origins=())
    assert (
        "access-control-allow-origin"
        not in closed.get("/v1/nodes", headers={"Origin": "https://grafana.example"}).headers
    )
