from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.telemetry.remotewrite.target import Target


@pytest.fixture
def target() -> Iterator[Target]:
    """A remote-write target on a free port (forwarded requests end there)."""
    started = Target()
    yield started
    started.close()
