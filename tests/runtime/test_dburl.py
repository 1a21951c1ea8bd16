from __future__ import annotations

import pytest

from lens.runtime import dburl


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///lens.db", dburl.DatabaseUrl(engine="sqlite", database="lens.db")),
        (
            "sqlite:////var/lib/lens/lens.db",
            dburl.DatabaseUrl(engine="sqlite", database="/var/lib/lens/lens.db"),
        ),
        ("sqlite:///:memory:", dburl.DatabaseUrl(engine="sqlite", database=":memory:")),
        (
            "postgresql://lens:p%40ss@db.example:6432/lens?sslmode=require",
            dburl.DatabaseUrl(
                engine="postgresql",
                database="lens",
                host="db.example",
                port=6432,
                user="lens",
                password="p@ss",
                params=(("sslmode", "require"),),
            ),
        ),
        (
            "postgres://db/lens",
            dburl.DatabaseUrl(engine="postgresql", database="lens", host="db", port=5432),
        ),
        (
            "mysql://root@127.0.0.1/test",
            dburl.DatabaseUrl(
                engine="mysql", database="test", host="127.0.0.1", port=3306, user="root"
            ),
        ),
        (
            "mariadb://u@[::1]:3307/x",
            dburl.DatabaseUrl(engine="mysql", database="x", host="::1", port=3307, user="u"),
        ),
    ],
)
def test_parse(url: str, expected: dburl.DatabaseUrl) -> None:
    assert dburl.parse_database_url(url) == expected


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("oracle://x/y", "expected a URL starting with one of sqlite://"),
        ("lens.db", "expected a URL starting with one of"),
        ("sqlite://lens.db", "three slashes"),
        ("sqlite:///", "expected a file path"),
        ("sqlite:///lens.db?mode=ro", "no query parameters"),
        ("postgresql:///lens", "expected a host"),
        ("postgresql://db", "expected a database name"),
        ("mysql://db/a/b", "expected a database name"),
        ("mysql://db:port/a", "expected a port number"),
    ],
)
def test_parse_rejects_with_a_reason(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        dburl.parse_database_url(url)
    assert problem in (dburl.check_database_url(url) or "")


def test_check_accepts_a_valid_url() -> None:
    assert dburl.check_database_url("sqlite:///x.db") is None
    assert dburl.check_database_url(5) == "expected a database URL"


@pytest.mark.parametrize(
    ("url", "redacted"),
    [
        ("postgresql://lens:hunter2@db:5432/lens", "postgresql://lens:***@db:5432/lens"),
        ("postgresql://lens@db/lens", "postgresql://lens@db/lens"),
        (
            "mysql://u@h/d?password=hunter2&ssl_ca=/a%20b",
            "mysql://u@h/d?password=***&ssl_ca=%2Fa%20b",
        ),
        ("sqlite:////var/lib/lens/lens.db", "sqlite:////var/lib/lens/lens.db"),
    ],
)
def test_redact(url: str, redacted: str) -> None:
    assert dburl.redact_url(url) == redacted


def test_sqlite_url_round_trips_an_absolute_path() -> None:
    url = dburl.sqlite_url("/tmp/a b/lens.db")
    assert dburl.parse_database_url(url).database == "/tmp/a b/lens.db"
