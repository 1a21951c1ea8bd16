"""Conditional GETs: an ETag on /v1 answers, 304 when If-None-Match holds it, errors untouched."""

from __future__ import annotations

import peewee
import pytest
from fastapi.testclient import TestClient

from lens.roles.api import caching
from tests.roles.api.conftest import error, node, write_nodes


def test_a_tag_is_the_bodys() -> None:
    assert caching.entity_tag(b"a") == caching.entity_tag(b"a") != caching.entity_tag(b"b")
    assert caching.entity_tag(b"a").startswith('W/"') and caching.entity_tag(b"a").endswith('"')


@pytest.mark.parametrize(
    ("header", "matched"),
    [('"t"', True), ('W/"t"', True), ('"x", "t"', True), ("*", True), ('"x"', False), ("", False)],
)
def test_if_none_match_lists(header: str, matched: bool) -> None:
    assert caching.matches(header, 'W/"t"') is matched


def test_an_unchanged_answer_is_a_304_and_a_changed_one_is_sent(
    sqlite_db: peewee.Database, sqlite_client: TestClient
) -> None:
    write_nodes(sqlite_db, node("gpu-1"))
    first = sqlite_client.get("/v1/nodes")
    tag = first.headers["etag"]
    assert first.headers["cache-control"] == "private, no-cache"
    again = sqlite_client.get("/v1/nodes", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
    write_nodes(sqlite_db, node("gpu-1"), node("gpu-2"))
    changed = sqlite_client.get("/v1/nodes", headers={"If-None-Match": tag})
    assert changed.status_code == 200 and changed.headers["etag"] != tag
    assert changed.json()["data"]["total"] == 2


def test_errors_and_paths_outside_v1_have_no_tag(sqlite_client: TestClient) -> None:
    missing = sqlite_client.get("/v1/nodes/nowhere")
    assert error(missing, 404) and "etag" not in missing.headers
    assert "etag" not in sqlite_client.get("/openapi.json").headers
