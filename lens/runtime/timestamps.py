"""RFC 3339 timestamps as Kubernetes and Docker write them ("2026-11-21T03:03:04.799359262Z")."""

from __future__ import annotations

import datetime


def parse_rfc3339(text: object) -> datetime.datetime | None:
    """An aware UTC datetime (fractions past the microsecond dropped); None when `text` is not a
    timestamp or one whose UTC time is past the year 9999 (or before the year 1). A time without a
    zone is taken as UTC."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    try:
        return moment.astimezone(datetime.UTC)
    except OverflowError:  # "9999-12-31T23:00:00-05:00" is in no UTC year datetime holds
        return None
