"""The `database` config section: which SQL store, its password source and its limits.

config/loading.py resolves the SQLite path and the password; store/database.py opens it.
"""

from __future__ import annotations

import dataclasses

from lens.runtime import dburl
from lens.runtime.settings import Secret, setting


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DatabaseConfig:
    """The SQL store shared by the controller, jobs and api."""

    url: str = setting(
        "sqlite:///lens.db",
        "Database URL: sqlite:///PATH (a relative PATH lives under service.data_dir), "
        "postgresql://USER@HOST:PORT/NAME or mysql://USER@HOST:PORT/NAME (MariaDB). "
        "Query parameters go to the driver (e.g. ?sslmode=verify-full).",
        check=dburl.check_database_url,
        redact=dburl.redact_url,
    )
    password: Secret = setting(
        Secret(""),
        "Database password; never printed. Prefer password_file or password_env.",
    )
    password_file: str = setting(
        "", "File whose content (without the trailing newline) is the database password."
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
