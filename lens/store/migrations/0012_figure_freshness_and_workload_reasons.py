"""0012: figure_freshness — when each figure the API serves was last measured, by the loop that
measures it (the dashboard says "as of" and marks what is stale) — and gpu_workloads'
status_reason (why a workload failed: BackoffLimitExceeded, OOMKilled, ...).

The original's `Done` becomes `Succeeded`: a workload that ended with no failure known. Which of
the ended ones failed cannot be told after the fact; the controller rewrites a workload it sees
again, and every workload ending from now on is told apart.
"""

from __future__ import annotations

from typing import Any

import peewee


class UtcDateTimeField(peewee.Field):
    field_type = "DATETIME"  # lens.store.fields.DATETIME_FIELD_TYPE when this migration was written


def up(migrator: Any, db: peewee.Database) -> None:
    class FigureFreshness(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        figure = peewee.CharField(max_length=64)
        as_of = UtcDateTimeField()
        stale_after_seconds = peewee.DoubleField()
        updated_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "figure_freshness"
            indexes = ((("cluster", "figure"), True),)

    db.create_tables([FigureFreshness])
    migrator.migrate(
        migrator.add_column(
            "gpu_workloads", "status_reason", peewee.CharField(max_length=128, default="")
        ),
    )
    db.execute_sql(  # type: ignore[no-untyped-call]  # untyped in peewee-stubs
        "UPDATE gpu_workloads SET status = 'Succeeded' WHERE status = 'Done'"
    )
