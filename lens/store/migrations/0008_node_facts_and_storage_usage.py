"""0008: what the node info job and the storage scan add to the original's columns.

nodes: memory_bytes (capacity memory in bytes; `memory` keeps the original's quantity text),
kernel_version, taints (a JSON list of {key, value, effect}). storage: the scanned backend's
provisioner and StorageClass, and its capacity and usage when a Prometheus-compatible query API
knows them (NULL: unknown) with the time they were read."""

from __future__ import annotations

from typing import Any

import peewee

from lens.store.fields import UtcDateTimeField


def up(migrator: Any, db: peewee.Database) -> None:
    migrator.migrate(
        migrator.add_column("nodes", "memory_bytes", peewee.BigIntegerField(null=True)),
        migrator.add_column(
            "nodes", "kernel_version", peewee.CharField(max_length=128, default="")
        ),
        migrator.add_column("nodes", "taints", peewee.TextField(default="[]")),
        migrator.add_column("storage", "provisioner", peewee.CharField(max_length=256, default="")),
        migrator.add_column(
            "storage", "storage_class", peewee.CharField(max_length=253, default="")
        ),
        migrator.add_column("storage", "capacity_bytes", peewee.BigIntegerField(null=True)),
        migrator.add_column("storage", "used_bytes", peewee.BigIntegerField(null=True)),
        migrator.add_column("storage", "total_inodes", peewee.BigIntegerField(null=True)),
        migrator.add_column("storage", "used_inodes", peewee.BigIntegerField(null=True)),
        migrator.add_column("storage", "usage_read_at", UtcDateTimeField(null=True)),
    )
