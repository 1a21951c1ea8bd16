"""0003: node device reports: gpu_minutes, gpu_minute_holders, rdma_port_minutes, gpu_hours,
gpu_hour_holders, gpu_hours_pending (issue 17).

No surrogate ids: the natural key is each row's identity. On PostgreSQL the three minute tables
are partitioned BY RANGE (minute), one partition per UTC day made ahead by the writer
(lens/reports/storing/partitions.py); their unique keys hold `minute`, as PostgreSQL requires.
"""

from __future__ import annotations

from typing import Any

import peewee


class JsonField(peewee.Field):
    field_type = "JSON"  # lens.store.fields.JSON_FIELD_TYPE when this migration was written


class UtcDateTimeField(peewee.Field):
    field_type = "DATETIME"  # lens.store.fields.DATETIME_FIELD_TYPE when this migration was written


def _double() -> peewee.DoubleField:
    return peewee.DoubleField(null=True)


def _partitioning(db: peewee.Database) -> list[str] | None:
    if isinstance(db, peewee.PostgresqlDatabase):
        return ['PARTITION BY RANGE ("minute")']
    return None


def up(migrator: Any, db: peewee.Database) -> None:
    by_day = _partitioning(db)

    class GpuMinuteReport(peewee.Model):
        cluster = peewee.CharField(max_length=64)
        node_name = peewee.CharField(max_length=253)
        gpu_uuid = peewee.CharField(max_length=128)
        gpu_index = peewee.IntegerField()
        pci_bus_id = peewee.CharField(max_length=64)
        minute = UtcDateTimeField()
        samples = peewee.IntegerField()
        expected_samples = peewee.IntegerField()
        utilization_mean_ratio = _double()
        utilization_max_ratio = _double()
        memory_activity_mean_ratio = _double()
        vram_used_mean_bytes = _double()
        vram_used_max_bytes = peewee.BigIntegerField(null=True)
        power_mean_watts = _double()
        energy_joules = _double()
        temperature_max_celsius = _double()
        temperature_edge_celsius = _double()
        temperature_junction_celsius = _double()
        temperature_memory_celsius = _double()
        temperature_gpu_celsius = _double()
        idle_seconds = peewee.DoubleField()
        holders = peewee.IntegerField()

        class Meta:
            database = db
            table_name = "gpu_minutes"
            primary_key = False
            table_settings = by_day
            indexes = (
                (("cluster", "node_name", "minute", "gpu_uuid"), True),
                (("minute",), False),
            )

    class GpuMinuteHolder(peewee.Model):
        cluster = peewee.CharField(max_length=64)
        node_name = peewee.CharField(max_length=253)
        gpu_uuid = peewee.CharField(max_length=128)
        minute = UtcDateTimeField()
        container_id = peewee.CharField(max_length=128)
        namespace = peewee.CharField(max_length=64)
        pod_name = peewee.CharField(max_length=253)
        pod_uid = peewee.CharField(max_length=64)
        container_name = peewee.CharField(max_length=253)
        seconds = peewee.DoubleField()
        held_seconds = peewee.DoubleField()

        class Meta:
            database = db
            table_name = "gpu_minute_holders"
            primary_key = False
            table_settings = by_day
            indexes = (
                (("cluster", "node_name", "minute", "gpu_uuid", "container_id"), True),
                (("pod_uid", "minute"), False),
                (("namespace", "minute"), False),
                (("minute",), False),
            )

    class RdmaPortMinute(peewee.Model):
        cluster = peewee.CharField(max_length=64)
        node_name = peewee.CharField(max_length=253)
        device = peewee.CharField(max_length=64)
        port = peewee.IntegerField()
        minute = UtcDateTimeField()
        samples = peewee.IntegerField()
        expected_samples = peewee.IntegerField()
        transmit_bytes = peewee.BigIntegerField(null=True)
        receive_bytes = peewee.BigIntegerField(null=True)
        transmit_packets = peewee.BigIntegerField(null=True)
        receive_packets = peewee.BigIntegerField(null=True)
        errors = peewee.BigIntegerField(null=True)
        counters = JsonField(null=True)
        hw_counters = JsonField(null=True)
        counter_resets = peewee.IntegerField()

        class Meta:
            database = db
            table_name = "rdma_port_minutes"
            primary_key = False
            table_settings = by_day
            indexes = (
                (("cluster", "node_name", "minute", "device", "port"), True),
                (("minute",), False),
            )

    db.create_tables([GpuMinuteReport, GpuMinuteHolder, RdmaPortMinute])
    _hours(db)


def _hours(db: peewee.Database) -> None:
    class GpuHour(peewee.Model):
        cluster = peewee.CharField(max_length=64)
        node_name = peewee.CharField(max_length=253)
        gpu_uuid = peewee.CharField(max_length=128)
        gpu_index = peewee.IntegerField()
        hour = UtcDateTimeField()
        minutes = peewee.IntegerField()
        samples = peewee.IntegerField()
        expected_samples = peewee.IntegerField()
        utilization_mean_ratio = _double()
        utilization_max_ratio = _double()
        memory_activity_mean_ratio = _double()
        vram_used_mean_bytes = _double()
        vram_used_max_bytes = peewee.BigIntegerField(null=True)
        power_mean_watts = _double()
        energy_joules = _double()
        energy_minutes = peewee.IntegerField()
        temperature_max_celsius = _double()
        temperature_edge_celsius = _double()
        temperature_junction_celsius = _double()
        temperature_memory_celsius = _double()
        temperature_gpu_celsius = _double()
        idle_seconds = peewee.DoubleField()

        class Meta:
            database = db
            table_name = "gpu_hours"
            primary_key = False
            indexes = (
                (("cluster", "node_name", "hour", "gpu_uuid"), True),
                (("hour",), False),
            )

    class GpuHourHolder(peewee.Model):
        cluster = peewee.CharField(max_length=64)
        node_name = peewee.CharField(max_length=253)
        gpu_uuid = peewee.CharField(max_length=128)
        hour = UtcDateTimeField()
        container_id = peewee.CharField(max_length=128)
        namespace = peewee.CharField(max_length=64)
        pod_name = peewee.CharField(max_length=253)
        pod_uid = peewee.CharField(max_length=64)
        container_name = peewee.CharField(max_length=253)
        minutes = peewee.IntegerField()
        seconds = peewee.DoubleField()
        held_seconds = peewee.DoubleField()

        class Meta:
            database = db
            table_name = "gpu_hour_holders"
            primary_key = False
            indexes = (
                (("cluster", "node_name", "hour", "gpu_uuid", "container_id"), True),
                (("pod_uid", "hour"), False),
                (("namespace", "hour"), False),
                (("hour",), False),
            )

    class GpuHourPending(peewee.Model):
        cluster = peewee.CharField(max_length=64)
        node_name = peewee.CharField(max_length=253)
        hour = UtcDateTimeField()
        token = peewee.BigIntegerField()
        marked_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "gpu_hours_pending"
            primary_key = False
            indexes = (
                (("cluster", "node_name", "hour"), True),
                (("cluster", "hour"), False),
            )

    db.create_tables([GpuHour, GpuHourHolder, GpuHourPending])
