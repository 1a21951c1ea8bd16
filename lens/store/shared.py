"""The database the roles of one process share: opened (and migrated) once, checked once.

`lens jobs` and `lens controller` each open it through here, so that in one process (as
`lens up` will run them) they share one connection pool, one migration run and one `database`
readiness check.
"""

from __future__ import annotations

import peewee

from lens.runtime.config import DatabaseConfig
from lens.runtime.process import Process
from lens.store import database, migrating


def shared_database(cfg: DatabaseConfig, process: Process) -> peewee.Database:
    """The process's database of `cfg.url`, opened and migrated on first use."""

    def open_it() -> peewee.Database:
        db = migrating.open_for_role(cfg)
        process.health.add_readiness("database", lambda: database.ping(db))
        return db

    return process.shared(f"database {cfg.url}", open_it)
