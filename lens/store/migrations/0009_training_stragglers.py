"""0009: training_stragglers — ranks or pods of a training run flagged as stragglers (issue 21)."""

from __future__ import annotations

from typing import Any

import peewee


class UtcDateTimeField(peewee.Field):
    field_type = "DATETIME"  # lens.store.fields.DATETIME_FIELD_TYPE when this migration was written


def up(migrator: Any, db: peewee.Database) -> None:
    class TrainingStraggler(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        workload_uid = peewee.CharField(max_length=64)
        serial = peewee.IntegerField()
        source = peewee.CharField(max_length=253)
        node_name = peewee.CharField(max_length=253, default="")
        started_at = UtcDateTimeField()
        ended_at = UtcDateTimeField()
        intervals = peewee.IntegerField()
        mean_share_above_median = peewee.DoubleField()
        peak_share_above_median = peewee.DoubleField()
        open = peewee.BooleanField()
        updated_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "training_stragglers"
            indexes = (
                (("cluster", "workload_uid", "serial", "source", "started_at"), True),
                (("cluster", "open"), False),
                (("cluster", "ended_at"), False),
            )

    db.create_tables([TrainingStraggler])
