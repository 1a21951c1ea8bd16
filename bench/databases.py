"""Fresh, throw-away databases for benchmarks: a temporary SQLite file or a new PostgreSQL one."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import psycopg2

POSTGRES_URL = os.environ.get(
    "LENS_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


@contextmanager
def fresh_database_url(engine: str) -> Iterator[str]:
    """The URL of an empty database of `engine` ("sqlite" or "postgresql"), dropped afterwards."""
    if engine == "sqlite":
        with tempfile.TemporaryDirectory() as directory:
            yield f"sqlite:///{directory}/bench.db"
        return
    if engine != "postgresql":
        raise ValueError(f"unknown engine {engine!r}: sqlite or postgresql")
    name = f"lens_bench_{uuid.uuid4().hex[:10]}"
    parts = urlsplit(POSTGRES_URL)
    admin = psycopg2.connect(POSTGRES_URL)
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()
