from __future__ import annotations

from types import SimpleNamespace

import peewee
import pytest
from fastapi.testclient import TestClient

from lens.roles.api.envelope import ParameterError
from lens.roles.api.routers import params
from lens.store.queries.reading import Page
from tests.roles.api.conftest import data, make_client, node, write_nodes


def _request(*, cluster: str = "home", max_page_size: int = 50) -> SimpleNamespace:
    context = params.Context(
        db=peewee.SqliteDatabase(":memory:"), cluster=cluster, max_page_size=max_page_size
    )
    return SimpleNamespace(app=SimpleNamespace(state=SimpleNamespace(context=context)))


def test_the_cluster_defaults_to_this_one() -> None:
    assert params.cluster(_request(cluster="home"), None) == "home"  # type: ignore[arg-type]
    assert params.cluster(_request(), "other-1") == "other-1"  # type: ignore[arg-type]
    with pytest.raises(ParameterError) as caught:
        params.cluster(_request(), "Other")  # type: ignore[arg-type]
    assert caught.value.parameter == "cluster"


def test_pages_are_numbered_from_one_and_bounded() -> None:
    request = _request(max_page_size=50)
    assert params.page(request, 3, 50) == Page(offset=100, limit=50)  # type: ignore[arg-type]
    with pytest.raises(ParameterError) as caught:
        params.page(request, 1, 51)  # type: ignore[arg-type]
    assert caught.value.parameter == "page_size"


def test_the_originals_defaults_page_one_of_ten(
    sqlite_db: peewee.Database, sqlite_client: TestClient
) -> None:
    write_nodes(sqlite_db, *(node(f"n{i:02d}") for i in range(12)))
    listed = data(sqlite_client.get("/v1/nodes"))
    assert isinstance(listed, dict)
    assert (len(listed["data"]), listed["total"]) == (10, 12)


def test_the_schema_declares_the_configured_largest_page(sqlite_db: peewee.Database) -> None:
    schema = make_client(sqlite_db, max_page_size=250).get("/openapi.json").json()
    sizes = [
        parameter["schema"]["maximum"]
        for operations in schema["paths"].values()
        for operation in operations.values()
        for parameter in operation.get("parameters", [])
        if parameter["name"] == "page_size"
    ]
    assert sizes and set(sizes) == {250}
