"""0010: an index on (cluster, updated_at) of the tables whose changed rows `lens jobs`'
remote-write enrichment reads every few seconds (gpu_pods, gpu_workloads, node_containers,
gpu_devices), so each read finds the few rows changed instead of scanning every row the tables
ever held."""

from __future__ import annotations

from typing import Any

import peewee

TABLES = ("gpu_pods", "gpu_workloads", "node_containers", "gpu_devices")


def up(migrator: Any, db: peewee.Database) -> None:
    migrator.migrate(
        *(migrator.add_index(table, ("cluster", "updated_at"), unique=False) for table in TABLES)
    )
