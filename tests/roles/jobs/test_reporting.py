"""The jobs' report upkeep: its loops make partitions, roll hours up and trim, on any engine; the
hours are as of the newest minute stored before the rollup that took it in."""

from __future__ import annotations

from collections.abc import Callable

import peewee
import pytest

from lens.roles.jobs import reporting
from lens.runtime.clock import FakeClock
from lens.runtime.config import ClusterConfig, Config, ServerConfig, ServiceConfig
from lens.runtime.process import Process
from lens.store import freshness
from tests.roles.api.seriesrows import CLUSTER, NOW, at, gpu_minute, write_minutes

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


def test_the_rollup_says_which_minutes_its_hours_hold(db: peewee.Database) -> None:
    clock = FakeClock(start_time=NOW.timestamp())
    process = Process(
        "jobs",
        server=ServerConfig(port=0),
        service=ServiceConfig(),
        clock=clock,
        handle_signals=False,
        process_metrics=False,
    )
    upkeep = reporting.ReportUpkeep(Config(cluster=ClusterConfig(name=CLUSTER)), process, db)
    upkeep.roll_up()  # nothing stored: nothing said
    assert freshness.read(db, cluster=CLUSTER, figures=[freshness.ROLLUP]) == {}
    minute = int(NOW.timestamp()) // 60 * 60 - 120
    write_minutes(db, "n1", [gpu_minute(minute, 0), gpu_minute(minute + 60, 0)])
    upkeep.roll_up()
    rolled = freshness.read(db, cluster=CLUSTER, figures=[freshness.ROLLUP])
    assert rolled[freshness.ROLLUP].as_of == at(minute + 120)
