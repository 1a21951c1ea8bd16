"""Bounded per-object history (snapshot tables): keep an object's newest versions, and tell
which objects have any history stored."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import peewee

from lens.store import models

_CHUNK = 500


def keep_newest(
    model: type[models.LensModel],
    version: peewee.Field[Any],
    mine: peewee.Expression,
    count: int,
) -> None:
    """Delete the rows matching `mine` older than the `count` newest by `version`."""
    kept = [
        int(getattr(row, version.name))
        for row in model.select(version).where(mine).order_by(version.desc()).limit(count)
    ]
    if len(kept) == count:
        model.delete().where(mine & (version < kept[-1])).execute()


def with_history(
    model: type[models.LensModel], owner: peewee.Field[Any], cluster: str, uids: Sequence[str]
) -> set[str]:
    """Which of `uids` have at least one row in `model` (a snapshot table) for `cluster`."""
    found: set[str] = set()
    for start in range(0, len(uids), _CHUNK):
        rows = (
            model.select(owner)
            .distinct()
            .where((model.cluster == cluster) & owner.in_(uids[start : start + _CHUNK]))
        )
        found.update(str(getattr(row, owner.name)) for row in rows)
    return found
