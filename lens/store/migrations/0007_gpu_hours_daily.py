"""0007: gpu_hours_daily — GPU-hours held, used and measured per day, group and GPU model."""

from __future__ import annotations

from typing import Any

import peewee


class UtcDateTimeField(peewee.Field):
    field_type = "DATETIME"  # lens.store.fields.DATETIME_FIELD_TYPE when this migration was written


def up(migrator: Any, db: peewee.Database) -> None:
    class GpuHoursDaily(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        day = UtcDateTimeField()
        group_kind = peewee.CharField(max_length=16)
        group_key = peewee.CharField(max_length=128, default="")
        group_value = peewee.CharField(max_length=253)
        gpu_model = peewee.CharField(max_length=128, default="")
        held_gpu_hours = peewee.DoubleField()
        used_gpu_hours = peewee.DoubleField()
        measured_gpu_hours = peewee.DoubleField()
        updated_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "gpu_hours_daily"
            indexes = (
                (("cluster", "day", "group_kind", "group_key", "group_value", "gpu_model"), True),
                (("cluster", "group_kind", "group_value", "day"), False),
            )

    db.create_tables([GpuHoursDaily])
