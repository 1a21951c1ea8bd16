"""Storage backends found by the storage scan."""

from __future__ import annotations

import peewee

from lens.store.fields import JsonField, UtcDateTimeField
from lens.store.models.base import NAME, LensModel, created, text


class Storage(LensModel):
    """A storage backend found by the storage scan (JuiceFS...)."""

    name = peewee.CharField(max_length=NAME)
    kind = peewee.CharField(max_length=64)
    config = JsonField(null=True)
    source = text(64)
    status = text(64)
    provisioner = text(256)
    storage_class = text(253)
    capacity_bytes = peewee.BigIntegerField(null=True)  # NULL: unknown (no query API, no series)
    used_bytes = peewee.BigIntegerField(null=True)
    total_inodes = peewee.BigIntegerField(null=True)
    used_inodes = peewee.BigIntegerField(null=True)
    usage_read_at = UtcDateTimeField(null=True)
    created_at = created()
    updated_at = created()
    deleted_at = UtcDateTimeField(null=True)

    class Meta:
        table_name = "storage"
        indexes = ((("cluster", "kind", "name"), True),)
