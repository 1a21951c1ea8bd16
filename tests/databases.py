"""Test databases on SQLite, PostgreSQL and MariaDB (real servers: scripts/services): a new
empty one per test, and a migrated one made by copying a template migrated once per session.

Migrating a new database is some sixty DDL statements, each committed to disk: a third of a
second on PostgreSQL, half a second on MariaDB, and several seconds when the CI machine's disk
is busy — past a test's 5 s timeout. A copy of a migrated template is one statement on
PostgreSQL (CREATE DATABASE ... TEMPLATE), one CREATE TABLE ... LIKE per table on MariaDB and a
file copy on SQLite. Tests of the migrations themselves start from an empty database.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import peewee
import psycopg2
import pymysql

from lens.runtime.config import DatabaseConfig
from lens.runtime.process import Process
from lens.store import database, migrating, shared

POSTGRES_URL = os.environ.get("LENS_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
MYSQL_URL = os.environ.get("LENS_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306/test")

ENGINES = ("sqlite", "postgresql", "mysql")


def close_all(db: peewee.Database) -> None:
    """Close every connection of the database (all threads' pooled ones too)."""
    closer = getattr(db, "close_all", None)
    if closer is not None:
        closer()
    else:
        db.close()


def share_database(process: Process, url: str, db: peewee.Database) -> None:
    """Have the roles `process` builds use `db`, the Database of `url` another replica in this
    interpreter opened, instead of opening their own (as lens.store.shared does for the roles
    of one process).

    Replicas deployed are processes of their own, each with one Database. Run in one
    interpreter they must share it: opening a Database binds every model to it, so a second
    one would take over the first replica's statements while its transactions stay on its own
    Database — two connections in one thread, and on SQLite the statements wait out the busy
    timeout, twice, for the write lock that replica's own transaction holds."""
    process.shared(f"database {url}", lambda: db)
    assert shared.shared_database(DatabaseConfig(url=url), process) is db  # the same key
    process.health.add_readiness("database", lambda: database.ping(db))


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def database_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def postgres_admin(database: str = "") -> psycopg2.extensions.connection:
    """An autocommit connection to the test server, to `database` or the server's own."""
    parts = urlsplit(POSTGRES_URL)
    conn = psycopg2.connect(
        host=parts.hostname,
        port=parts.port or 5432,
        user=parts.username,
        password=parts.password,
        dbname=database or parts.path.lstrip("/"),
    )
    conn.autocommit = True
    return conn


def mysql_admin(database: str = "") -> pymysql.connections.Connection:
    """An autocommit connection to the test server, to `database` or to none."""
    parts = urlsplit(MYSQL_URL)
    return pymysql.connect(
        host=parts.hostname,
        port=parts.port or 3306,
        user=parts.username,
        password=parts.password or "",
        database=database or None,
        autocommit=True,
    )


@contextlib.contextmanager
def new_database(engine: str, directory: Path, *, template: str = "") -> Iterator[str]:
    """The URL of a new database on `engine`, dropped afterwards (SQLite: in `directory`):
    empty, or a copy of the database at the URL `template` (of the same engine, with no
    connection open to it)."""
    name = f"lens_t_{uuid.uuid4().hex[:12]}"
    if engine == "sqlite":
        path = directory / f"{name}.db"
        if template:
            shutil.copyfile(template.removeprefix("sqlite:///"), path)
        yield f"sqlite:///{path}"
    elif engine == "postgresql":
        admin = postgres_admin()
        with admin.cursor() as cursor:
            copy = f' TEMPLATE "{database_name(template)}"' if template else ""
            cursor.execute(f'CREATE DATABASE "{name}"{copy}')
        try:
            yield with_database(POSTGRES_URL, name)
        finally:
            with admin.cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.close()
    else:
        admin = mysql_admin()
        with admin.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
        try:
            if template:
                _copy_mysql(admin, database_name(template), name)
            yield with_database(MYSQL_URL, name)
        finally:
            with admin.cursor() as cursor:
                cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
            admin.close()


class MigratedTemplates:
    """One migrated database per engine, made at its first use and dropped by close(), to be
    copied by new_database(template=...)."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._made = contextlib.ExitStack()
        self._urls: dict[str, str] = {}

    def url(self, engine: str) -> str:
        if engine not in self._urls:
            url = self._made.enter_context(new_database(engine, self._directory))
            db = database.open_database(DatabaseConfig(url=url))
            try:
                migrating.migrate(db)
            finally:
                close_all(db)  # PostgreSQL copies only a database nobody is connected to
            self._urls[engine] = url
        return self._urls[engine]

    def close(self) -> None:
        self._made.close()
        self._urls.clear()


def _copy_mysql(admin: pymysql.connections.Connection, template: str, name: str) -> None:
    with admin.cursor() as cursor:
        cursor.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = %s AND table_type = 'BASE TABLE'",
            (template,),
        )
        tables = [row[0] for row in cursor.fetchall()]
        for table in tables:
            cursor.execute(f"CREATE TABLE `{name}`.`{table}` LIKE `{template}`.`{table}`")
        # Rows too (the migration history, at least), in one transaction: one commit.
        admin.begin()
        for table in tables:
            cursor.execute(f"INSERT INTO `{name}`.`{table}` SELECT * FROM `{template}`.`{table}`")
        admin.commit()
