"""The `database` config section: which SQL store, its password source and its limits.

config/loading.py resolves the SQLite path and the password; store/database.py opens it.
"""

from __future__ import annotations

import dataclasses

from lens.runtime import dburl
from lens.runtime.settings import Secret, setting


def _check_url(url: object) -> str | None:
    """A parseable URL whose parts, once %-decoded, the drivers accept: a NUL (%00) in a name,
    user, password, host or parameter makes them raise ValueError rather than connect."""
    problem = dburl.check_database_url(url)
    if not isinstance(url, str):
        return problem
    if problem is not None:
        return _hide_password(problem, url)
    parts = dburl.parse_database_url(url)
    named = {
        "database name" if parts.engine != "sqlite" else "file path": parts.database,
        "host": parts.host,
        "user": parts.user,
        "password": parts.password,
        **{f"parameter {name!r}": f"{name}={value}" for name, value in parts.params},
    }
    for what, text in named.items():
        if "\x00" in text:
            return f"expected no NUL character (%00) in the URL's {what}"
    return None


_URLSPLIT_DROPS = dict.fromkeys(map(ord, "\t\r\n"))


def _hide_password(problem: str, url: str) -> str:
    """The problem without the URL's password: urlsplit quotes the host part of a URL it
    refuses ("netloc 'user:pw@host' contains invalid characters under NFKC normalization")."""
    netloc = url.translate(_URLSPLIT_DROPS).partition("://")[2]
    for end in "/?#":
        netloc = netloc.partition(end)[0]
    password = netloc.rpartition("@")[0].partition(":")[2]
    return problem.replace(password, "***") if password else problem


def _redact(url: str) -> str:
    """The URL with its password hidden; all of it hidden when it is too malformed to split."""
    try:
        return dburl.redact_url(url)
    except ValueError:  # urlsplit: "Invalid IPv6 URL"
        return "***"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DatabaseConfig:
    """The SQL store shared by the controller, jobs and api."""

    url: str = setting(
        "sqlite:///lens.db",
        "Database URL: sqlite:///PATH (a relative PATH lives under service.data_dir), "
        "postgresql://USER@HOST:PORT/NAME or mysql://USER@HOST:PORT/NAME (MariaDB). "
        "Query parameters go to the driver (e.g. ?sslmode=verify-full).",
        check=_check_url,
        redact=_redact,
    )
    password: Secret = setting(
        Secret(""),
        "Database password; never printed. Prefer password_file or password_env.",
    )
    password_file: str = setting(
        "",
        "File whose content (without the trailing newline) is the database password.",
        path=True,
    )
    password_env: str = setting(
        "", "Name of an environment variable that holds the database password."
    )
    migrate_on_start: bool = setting(
        True, "Apply pending schema migrations when a role starts (lens db migrate does it too)."
    )
    max_connections: int = setting(
        10,
        "Most connections one process keeps open to PostgreSQL or MariaDB.",
        minimum=1,
        maximum=1000,
    )
    connect_timeout_seconds: float = setting(
        10.0, "How long opening a connection may take.", minimum=0.1, maximum=600
    )
    busy_timeout_seconds: float = setting(
        10.0,
        "SQLite only: how long a writer waits for another writer's lock before failing.",
        minimum=0,
        maximum=600,
    )
