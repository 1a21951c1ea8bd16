"""The frame of read queries: pages from page numbers, a failing driver as StoreError,
`contains` matching `%`, `_` and the escape literally on every engine, and queries built once
and run each time."""

from __future__ import annotations

import threading
from typing import Any

import peewee
import pytest

from lens.runtime import errors
from lens.runtime.config import DatabaseConfig
from lens.store import database, migrating, models
from lens.store.queries import nodes
from lens.store.queries.reading import Page, contains, reading, rows_built_once
from tests.databases import close_all
from tests.roles.api.conftest import CLUSTER, node, write_nodes


def test_pages_are_numbered_from_one() -> None:
    assert Page.numbered(1, 10) == Page(offset=0, limit=10)
    assert Page.numbered(3, 25) == Page(offset=50, limit=25)
    for bad in ((0, 10), (1, 0)):
        with pytest.raises(ValueError):
            Page.numbered(*bad)


def test_contains_matches_wildcards_literally_and_ignores_case(db: peewee.Database) -> None:
    names = ["gpu_1", "gpux1", "gpu%2", "gpuab2", "gpu!3", "GPU-4"]
    write_nodes(db, *(node(n) for n in names))
    table = models.Node

    def matching(text: str) -> set[str]:
        with reading(db):
            query = table.select(table.name).where(
                (table.cluster == CLUSTER) & contains(table.name, text)
            )
            return {row.name for row in query}

    assert matching("u_1") == {"gpu_1"}
    assert matching("u%") == {"gpu%2"}
    assert matching("!3") == {"gpu!3"}
    assert matching("gpu-4") == {"GPU-4"}
    assert matching("") == set(names)


def test_a_database_that_cannot_be_opened_is_a_store_error() -> None:
    broken = peewee.SqliteDatabase("/nonexistent/dir/lens.db")
    with pytest.raises(errors.StoreError):
        nodes.get_node(broken, cluster=CLUSTER, name="x")


@pytest.mark.parametrize("database_engine", ["postgresql"], indirect=True)
def test_every_pooled_connection_busy_is_a_store_error(empty_database_url: str) -> None:
    # It was a ValueError of the pool, answered 500 as a bug; the store is busy: a 503.
    config = DatabaseConfig(url=empty_database_url, max_connections=1, connect_timeout_seconds=0.1)
    busy = database.open_database(config)
    migrating.migrate(busy)
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with database.session(busy):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        with pytest.raises(errors.StoreError):
            nodes.get_node(busy, cluster=CLUSTER, name="x")
    finally:
        release.set()
        holder.join(10)
        close_all(busy)


def test_a_query_is_built_once_and_run_anew_each_time(db: peewee.Database) -> None:
    built: list[str] = []

    def names(cluster: str) -> Any:
        built.append(cluster)
        table = models.Node
        return (
            table.select(table.name).where(table.cluster == cluster).order_by(table.name).tuples()
        )

    write_nodes(db, node("a"), node("b"))
    with reading(db):
        assert rows_built_once(db, names, CLUSTER) == [("a",), ("b",)]
    write_nodes(db, node("c"))
    with reading(db):
        assert rows_built_once(db, names, CLUSTER) == [("a",), ("b",), ("c",)]  # rows of now
        assert rows_built_once(db, names, "other") == []
    assert built == [CLUSTER, "other"]
