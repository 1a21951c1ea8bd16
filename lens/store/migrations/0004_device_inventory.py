"""0004: device inventory — gpu_devices by uuid with every reported fact, rdma_devices with theirs,
deleted_at on both, and node_device_changelog's changes (what an UPDATE changed) keyed by id.

gpu_devices rows from before (keyed by index, no uuid) get the uuid `index:<gpu_id>`, unique per
node; the node's next successful inventory retires them (DELETE) and creates its GPUs by uuid.
Facts that may be unknown become nullable (memory, if_index, node_guid, fw, node_type).
"""

from __future__ import annotations

from typing import Any

import peewee


class UtcDateTimeField(peewee.Field):
    field_type = "DATETIME"  # lens.store.fields.DATETIME_FIELD_TYPE when this migration was written


def up(migrator: Any, db: peewee.Database) -> None:
    _gpu_devices(migrator, db)
    _rdma_devices(migrator)
    _changelog(migrator, db)


def _index_on(db: peewee.Database, table: str, columns: tuple[str, ...]) -> str:
    """The name of the table's index on exactly `columns` (0001 named them after its models)."""
    for index in db.get_indexes(table):
        if tuple(index.columns) == columns:
            return str(index.name)
    raise LookupError(f"{table} has no index on {columns}")


def _add_columns(migrator: Any, table: str, columns: dict[str, peewee.Field]) -> None:
    migrator.migrate(*(migrator.add_column(table, name, f) for name, f in columns.items()))


def _gpu_devices(migrator: Any, db: peewee.Database) -> None:
    table = "gpu_devices"
    short, name = 64, 128
    _add_columns(
        migrator,
        table,
        {
            "uuid": peewee.CharField(max_length=128, default=""),
            "vendor": peewee.CharField(max_length=short, default=""),
            "pci_bus_id": peewee.CharField(max_length=short, default=""),
            "vbios": peewee.CharField(max_length=name, null=True),
            "vram_bytes": peewee.BigIntegerField(null=True),
            "compute_partition": peewee.CharField(max_length=short, null=True),
            "memory_partition": peewee.CharField(max_length=short, null=True),
            "driver_version": peewee.CharField(max_length=short, null=True),
            "deleted_at": UtcDateTimeField(null=True),
        },
    )

    class GpuDevice(peewee.Model):
        id = peewee.BigAutoField()
        gpu_id = peewee.IntegerField()
        uuid = peewee.CharField(max_length=128)

        class Meta:
            database = db
            table_name = table

    # The original's rows, one per index and node: a uuid unique per node until retired.
    for row in GpuDevice.select(GpuDevice.id, GpuDevice.gpu_id):
        GpuDevice.update(uuid=f"index:{row.gpu_id}").where(GpuDevice.id == row.id).execute()
    migrator.migrate(
        migrator.drop_not_null(table, "memory"),
        migrator.drop_index(table, _index_on(db, table, ("cluster", "node_name", "gpu_id"))),
        migrator.add_index(table, ("cluster", "node_name", "uuid"), unique=True),
    )


def _rdma_devices(migrator: Any) -> None:
    table = "rdma_devices"
    short, name = 64, 128
    migrator.migrate(
        migrator.alter_column_type(table, "ifname", peewee.CharField(max_length=name)),
        migrator.alter_column_type(table, "fw", peewee.CharField(max_length=name, null=True)),
        *(migrator.drop_not_null(table, column) for column in ("fw", "node_guid", "node_type")),
        migrator.drop_not_null(table, "if_index"),
    )
    _add_columns(
        migrator,
        table,
        {
            "sys_image_guid": peewee.CharField(max_length=short, null=True),
            "hca_type": peewee.CharField(max_length=short, null=True),
            "board_id": peewee.CharField(max_length=name, null=True),
            "pci_bus_id": peewee.CharField(max_length=short, null=True),
            "numa_node": peewee.IntegerField(null=True),
            "netdevs": peewee.TextField(default="[]"),
            "ports": peewee.TextField(default="[]"),
        },
    )


def _changelog(migrator: Any, db: peewee.Database) -> None:
    table = "node_device_changelog"
    old_key = ("cluster", "node_name", "device_type", "device_uuid", "op", "created_at")
    migrator.migrate(
        migrator.add_column(table, "changes", peewee.TextField(default="")),
        migrator.drop_index(table, _index_on(db, table, old_key)),
        migrator.add_index(table, ("cluster", "node_name", "created_at", "id"), unique=True),
    )
