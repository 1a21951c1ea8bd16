"""0005: gpu_idle_intervals — GPUs held by a pod and idle for at least a window (issue 18)."""

from __future__ import annotations

from typing import Any

import peewee


class UtcDateTimeField(peewee.Field):
    field_type = "DATETIME"  # lens.store.fields.DATETIME_FIELD_TYPE when this migration was written


def up(migrator: Any, db: peewee.Database) -> None:
    class GpuIdleInterval(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        node_name = peewee.CharField(max_length=253)
        gpu_uuid = peewee.CharField(max_length=128)
        pod_uid = peewee.CharField(max_length=64)
        namespace = peewee.CharField(max_length=64, default="")
        pod_name = peewee.CharField(max_length=253, default="")
        workload_uid = peewee.CharField(max_length=64, default="")
        started_at = UtcDateTimeField()
        ended_at = UtcDateTimeField()
        minutes = peewee.IntegerField()
        utilization_mean_ratio = peewee.DoubleField()
        open = peewee.BooleanField()
        updated_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "gpu_idle_intervals"
            indexes = (
                (("cluster", "node_name", "gpu_uuid", "pod_uid", "started_at"), True),
                (("cluster", "ended_at"), False),
                (("cluster", "namespace", "ended_at"), False),
                (("cluster", "open"), False),
            )

    db.create_tables([GpuIdleInterval])
