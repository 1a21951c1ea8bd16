"""Column types that mean the same on SQLite, PostgreSQL and MariaDB: UTC times and JSON.

store/models/ declares its columns with these; store/database.py maps their field types per
engine (DATETIME(6) on MariaDB, JSONB on PostgreSQL, TEXT on SQLite).
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import peewee

JSON_FIELD_TYPE = "JSON"
DATETIME_FIELD_TYPE = "DATETIME"

_SQLITE_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class UtcDateTimeField(peewee.Field):
    """An aware UTC datetime with microseconds; naive datetimes are refused as ambiguous."""

    field_type = DATETIME_FIELD_TYPE

    def db_value(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, datetime.datetime):
            raise TypeError(f"{self.name}: expected a datetime, got {type(value).__name__}")
        if value.tzinfo is None:
            raise ValueError(f"{self.name}: naive datetime {value} is ambiguous; give it a tzinfo")
        naive = value.astimezone(datetime.UTC).replace(tzinfo=None)
        if isinstance(self.model._meta.database, peewee.SqliteDatabase):
            # Fixed width text, so that comparisons in SQL order like the times they hold.
            return naive.strftime(_SQLITE_FORMAT)
        return naive

    def python_value(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            value = datetime.datetime.fromisoformat(value)
        if isinstance(value, datetime.datetime):
            if value.tzinfo is None:
                return value.replace(tzinfo=datetime.UTC)
            return value.astimezone(datetime.UTC)
        raise TypeError(f"{self.name}: cannot read {value!r} as a datetime")


class JsonField(peewee.Field):
    """A JSON document: jsonb on PostgreSQL, JSON on MariaDB, text on SQLite."""

    field_type = JSON_FIELD_TYPE

    def db_value(self, value: Any) -> Any:
        if value is None:
            return None
        return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)

    def python_value(self, value: Any) -> Any:
        if isinstance(value, str | bytes):
            return json.loads(value)
        return value  # psycopg2 already decodes jsonb
