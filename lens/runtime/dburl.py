"""Database URLs: parse `sqlite:///PATH`, `postgresql://...` and `mysql://...`, and redact them.

Used by runtime/config/database.py to validate `database.url` at load time and by
store/database.py to open the connection, so both agree on what a URL means.
"""

from __future__ import annotations

import dataclasses
from typing import Literal
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

Engine = Literal["sqlite", "postgresql", "mysql"]

_SCHEMES: dict[str, Engine] = {
    "sqlite": "sqlite",
    "postgresql": "postgresql",
    "postgres": "postgresql",
    "mysql": "mysql",
    "mariadb": "mysql",
}

_DEFAULT_PORTS: dict[Engine, int] = {"postgresql": 5432, "mysql": 3306}

MEMORY = ":memory:"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DatabaseUrl:
    """The parts of a database URL; `database` is a file path for SQLite."""

    engine: Engine
    database: str
    host: str = ""
    port: int = 0
    user: str = ""
    password: str = dataclasses.field(default="", repr=False)
    params: tuple[tuple[str, str], ...] = ()

    @property
    def is_memory(self) -> bool:
        return self.engine == "sqlite" and self.database == MEMORY


def parse_database_url(url: str) -> DatabaseUrl:
    """Parse a database URL; ValueError says what is wrong with it."""
    parts = urlsplit(url)
    engine = _SCHEMES.get(parts.scheme)
    if engine is None:
        known = ", ".join(f"{s}://" for s in _SCHEMES)
        raise ValueError(f"expected a URL starting with one of {known}")
    params = tuple(parse_qsl(parts.query, keep_blank_values=True))
    if engine == "sqlite":
        return _parse_sqlite(parts.netloc, parts.path, params)
    if not parts.hostname:
        raise ValueError(f"expected a host in the {engine} URL")
    try:
        port = parts.port or _DEFAULT_PORTS[engine]
    except ValueError as exc:
        raise ValueError(f"expected a port number in the {engine} URL") from exc
    name = unquote(parts.path.lstrip("/"))
    if not name or "/" in name:
        raise ValueError(f"expected a database name in the {engine} URL path")
    return DatabaseUrl(
        engine=engine,
        database=name,
        host=parts.hostname,
        port=port,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        params=params,
    )


def _parse_sqlite(netloc: str, path: str, params: tuple[tuple[str, str], ...]) -> DatabaseUrl:
    if netloc:
        raise ValueError(
            "expected sqlite:///relative/path or sqlite:////absolute/path (three slashes)"
        )
    if params:
        raise ValueError("expected no query parameters in a sqlite URL")
    database = unquote(path[1:]) if path.startswith("/") else ""
    if not database or database.endswith("/"):
        raise ValueError("expected a file path after sqlite:///")
    return DatabaseUrl(engine="sqlite", database=database)


def check_database_url(url: object) -> str | None:
    """Settings check for `database.url`: what was expected, or None when the URL is valid."""
    if not isinstance(url, str):
        return "expected a database URL"
    try:
        parse_database_url(url)
    except ValueError as exc:
        return str(exc)
    return None


_SECRET_PARAMS = frozenset({"password", "passwd", "sslpassword"})


def redact_url(url: str) -> str:
    """The URL with any password (user-info or query parameter) replaced by `***`."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        userinfo, _, hostport = netloc.rpartition("@")
        netloc = f"{userinfo.partition(':')[0]}:***@{hostport}"
    query = parts.query
    pairs = parse_qsl(query, keep_blank_values=True)
    if any(name.lower() in _SECRET_PARAMS for name, _ in pairs):
        query = "&".join(
            f"{name}={'***' if name.lower() in _SECRET_PARAMS else quote(value, safe='')}"
            for name, value in pairs
        )
    if (netloc, query) == (parts.netloc, parts.query):
        return url  # rebuilding could change it: urlunsplit drops a sqlite URL's empty host
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def sqlite_url(path: str) -> str:
    """The sqlite URL of an absolute file path (or `:memory:`)."""
    return f"sqlite:///{path}"
