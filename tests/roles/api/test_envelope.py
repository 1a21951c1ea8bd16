"""The original's envelope with real statuses: data in 200s (written by a model or without one,
the same bytes); 400 naming the parameter; 404, 503 and 500 in the envelope, the 500 logged
once with its route and never a header."""

from __future__ import annotations

import logging
from typing import Annotated

import pytest
from fastapi import FastAPI, Query
from fastapi.testclient import TestClient

from lens.roles.api import envelope
from lens.roles.api.schemas import base
from lens.runtime import errors
from tests.roles.api.conftest import data, error


def _app() -> FastAPI:
    app = FastAPI()

    def answer(count: Annotated[int, Query(ge=1)] = 1) -> object:
        return envelope.ok({"count": count})

    def plain() -> object:
        return envelope.ok_json({"name": "gpü", "values": [0.1, 1e-07, 2.0, 3]})

    def broken() -> object:
        raise RuntimeError("a bug")

    def database_down() -> object:
        raise errors.StoreError("read failed: connection refused")

    def missing(name: str) -> object:
        raise envelope.NotFoundError(f"node {name}")

    def refused() -> object:
        raise envelope.ParameterError("step", "must be more than 0")

    for path, handler in [
        ("/answer", answer),
        ("/plain", plain),
        ("/broken", broken),
        ("/down", database_down),
        ("/missing/{name}", missing),
        ("/refused", refused),
    ]:
        app.add_api_route(path, handler, methods=["GET"])
    envelope.install_handlers(app)
    app.add_middleware(envelope.ContainErrors)
    return app


@pytest.fixture
def client() -> TestClient:
    return TestClient(_app(), raise_server_exceptions=False)


def test_data_written_without_a_model_is_what_the_model_would_send(client: TestClient) -> None:
    answer = client.get("/plain")
    assert answer.headers["content-type"] == "application/json"
    values = {"name": "gpü", "values": [0.1, 1e-07, 2.0, 3]}
    model = base.Envelope[dict[str, object]](
        meta=base.Meta(code=base.OK, message="OK"), data=values
    )
    assert answer.content == model.model_dump_json().encode()
    assert data(answer) == values


def test_data_and_errors_in_the_envelope(client: TestClient) -> None:
    assert data(client.get("/answer?count=3")) == {"count": 3}
    assert error(client.get("/answer?count=0"), 400).startswith("count: ")
    assert error(client.get("/answer?count=x"), 400).startswith("count: ")
    assert error(client.get("/refused"), 400) == "step: must be more than 0"
    assert error(client.get("/missing/gpu-1"), 404) == "node gpu-1 not found"
    assert error(client.get("/nowhere"), 404) == "no such path"
    assert error(client.get("/down"), 503) == "the database is unavailable"


def test_a_bug_is_a_500_logged_once_with_its_route(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="lens.roles.api.envelope")
    answer = client.get("/broken", headers={"Authorization": "Bearer s3cret"})
    assert error(answer, 500) == "internal error"
    (record,) = [r for r in caplog.records if r.getMessage() == "api request failed"]
    assert record.__dict__["route"] == "/broken"
    assert record.__dict__["error"] == "RuntimeError: a bug"
    assert all("s3cret" not in f"{r.__dict__}" for r in caplog.records)
