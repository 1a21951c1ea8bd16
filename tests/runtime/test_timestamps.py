from __future__ import annotations

import datetime

from lens.runtime.timestamps import parse_rfc3339

UTC = datetime.UTC


def test_kubernetes_and_docker_timestamps() -> None:
    assert parse_rfc3339("2026-11-21T03:03:04Z") == datetime.datetime(
        2026, 11, 21, 3, 3, 4, tzinfo=UTC
    )
    assert parse_rfc3339("2026-11-21T03:03:04.799359262Z") == datetime.datetime(
        2026, 11, 21, 3, 3, 4, 799359, tzinfo=UTC
    )
    assert parse_rfc3339("2026-11-21T04:03:04+01:00") == datetime.datetime(
        2026, 11, 21, 3, 3, 4, tzinfo=UTC
    )
    assert parse_rfc3339("2026-11-21T03:03:04") == datetime.datetime(
        2026, 11, 21, 3, 3, 4, tzinfo=UTC
    )
    for bad in ("not a time", "", None, 17):
        assert parse_rfc3339(bad) is None
