"""The jobs' report upkeep: its loops make partitions, roll hours up and trim, on any engine."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lens.roles.jobs import reporting
from lens.runtime.config import Config

pytestmark = pytest.mark.slow_timeout


@pytest.mark.parametrize("database_engine", ["sqlite", "postgresql"], indirect=True)
def test_the_jobs_register_the_report_extension_and_its_loops(
    start_jobs: Callable[..., object],
) -> None:
    running = start_jobs()
    jobs = running.jobs  # type: ignore[attr-defined]
    loops = {loop.name for loop in jobs.process.loops._loops}
    assert {"report-partitions", "report-rollup", "report-retention"} <= loops
    upkeep = reporting.ReportUpkeep(Config(), jobs.process, jobs.db)
    upkeep.make_partitions()
    upkeep.roll_up()
    upkeep.trim()
