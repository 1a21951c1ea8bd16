"""The `Measured` of a payload's figures: from a loop's recorded freshness (store/freshness.py)
or from the latest complete minute they were read in (store/queries/seriesnow.py)."""

from __future__ import annotations

import datetime

from lens.roles.api.schemas.measured import Measured
from lens.store import freshness
from lens.store.queries import seriesnow


def _unix(moment: datetime.datetime) -> int:
    return int(moment.timestamp())


def of_freshness(found: freshness.Freshness | None, now: datetime.datetime) -> Measured:
    """A loop's figure; never recorded: no time, stale."""
    if found is None:
        return Measured(as_of=None, stale=True)
    return Measured(as_of=_unix(found.as_of), stale=found.stale(now))


def of_minute(minute: datetime.datetime | None, now: datetime.datetime) -> Measured:
    """Figures of the latest complete minute `minute` (None: none recent)."""
    if minute is None:
        return Measured(as_of=None, stale=True)
    return Measured(as_of=_unix(minute), stale=seriesnow.minute_stale(minute, now))
