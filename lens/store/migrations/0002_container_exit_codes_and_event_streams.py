"""0002: exit codes on containers and their events; event_streams (what each agent boot committed).

The event server commits an agent's records in order and keeps, per (node, boot id), the highest
sequence committed, in the same transaction as the rows, so a resent record is recognised.
"""

from __future__ import annotations

from typing import Any

import peewee


class UtcDateTimeField(peewee.Field):
    field_type = "DATETIME"  # lens.store.fields.DATETIME_FIELD_TYPE when this migration was written


def up(migrator: Any, db: peewee.Database) -> None:
    for table in ("node_containers", "node_container_events"):
        migrator.migrate(migrator.add_column(table, "exit_code", peewee.IntegerField(null=True)))

    class EventStream(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        node_name = peewee.CharField(max_length=253)
        boot_id = peewee.CharField(max_length=64)
        committed_sequence = peewee.BigIntegerField()
        created_at = UtcDateTimeField()
        updated_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "event_streams"
            indexes = (
                (("cluster", "node_name", "boot_id"), True),
                (("updated_at",), False),
            )

    db.create_tables([EventStream])
