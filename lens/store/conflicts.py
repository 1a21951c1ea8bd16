"""Which driver errors mean a transaction lost to another one (the connection is still good),
as against a lost connection: both are worth one more try of idempotent work, but they are
different things to tell an operator, and only a lost connection needs a new one."""

from __future__ import annotations

# PostgreSQL's class 40, transaction rollback: serialization failure (40001), deadlock (40P01).
_POSTGRESQL_ROLLBACK_CLASS = "40"
# MariaDB/MySQL: lock wait timeout exceeded (1205), deadlock found (1213).
_MYSQL_LOST_TO_ANOTHER = {1205: "lock wait timeout", 1213: "deadlock"}
# SQLite: the busy timeout ran out waiting for another connection's lock, or the snapshot a
# deferred transaction read is stale.
_SQLITE_LOCKED = ("database is locked", "database table is locked")


def lost_to_another_transaction(exc: BaseException) -> str | None:
    """Why `exc` (a peewee error, which holds the driver's as `orig`, or the driver's own) is
    a transaction that lost to another one; None when it is something else (the connection
    lost, or a statement's own error)."""
    driver: BaseException = getattr(exc, "orig", None) or exc
    code = getattr(driver, "pgcode", None)
    if isinstance(code, str):
        return f"PostgreSQL {code}" if code.startswith(_POSTGRESQL_ROLLBACK_CLASS) else None
    number = driver.args[0] if driver.args else None
    if isinstance(number, int) and type(driver).__module__.startswith("pymysql"):
        reason = _MYSQL_LOST_TO_ANOTHER.get(number)
        return f"MariaDB {number} {reason}" if reason else None
    if type(driver).__module__ == "sqlite3" and str(driver).startswith(_SQLITE_LOCKED):
        return f"SQLite {driver}"
    return None
