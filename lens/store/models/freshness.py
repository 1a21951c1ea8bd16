"""figure_freshness: when each figure the API serves was last measured (store/freshness.py
writes and reads it)."""

from __future__ import annotations

import peewee

from lens.store.fields import UtcDateTimeField
from lens.store.models.base import LensModel, created


class FigureFreshness(LensModel):
    """One figure of one cluster (`nodes`, `gpu_hours`, `idle`, ...): the time its latest
    value is of, and the age past which that value is stale (store/freshness.py)."""

    figure = peewee.CharField(max_length=64)
    as_of = UtcDateTimeField()
    stale_after_seconds = peewee.DoubleField()
    updated_at = created()

    class Meta:
        table_name = "figure_freshness"
        indexes = ((("cluster", "figure"), True),)
