"""The check every model module's test makes of its tables."""

from __future__ import annotations

from lens.store.models import base

Expected = tuple[type[base.LensModel], str, tuple[str, ...], bool]
"""A model, its table's name, its natural key's columns, and whether it only ever grows."""


def check_tables(expected: list[Expected]) -> None:
    for model, table, key, append_only in expected:
        assert model._meta.table_name == table, model.__name__
        assert tuple(f.name for f in base.natural_key(model)) == key, model.__name__
        assert model.APPEND_ONLY is append_only, model.__name__
