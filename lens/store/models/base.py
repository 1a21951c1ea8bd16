"""The base of every table: a 64-bit id and the row's cluster; column sizes; the natural key.

Each table's one unique index is its natural key (store/upserting.py writes on it).
"""

from __future__ import annotations

from typing import Any, ClassVar

import peewee

from lens.store.fields import UtcDateTimeField, utc_now

# Kubernetes limits: names of most objects 253, namespaces and labels 63, UIDs 36.
NAME = 253
NAMESPACE = 64
UID = 64
CLUSTER = 64


class LensModel(peewee.Model):
    """Base of every table: a 64-bit id and the cluster the row belongs to."""

    # True for tables that only ever grow (events, snapshots): store/retention.py trims them.
    APPEND_ONLY: ClassVar[bool] = False

    id = peewee.BigAutoField()
    cluster = peewee.CharField(max_length=CLUSTER)

    class Meta:
        legacy_table_names = False


def text(length: int) -> peewee.CharField:
    return peewee.CharField(max_length=length, default="")


def created() -> UtcDateTimeField:
    return UtcDateTimeField(default=utc_now)


def natural_key(model: type[LensModel]) -> tuple[peewee.Field[Any], ...]:
    """The columns of the model's unique index, which upserts conflict on."""
    for index in model._meta.indexes:
        columns, unique = index
        if unique:
            return tuple(model._meta.fields[name] for name in columns)
    raise LookupError(f"{model.__name__} has no unique natural key")
