"""Lens's cluster figures against the truth a replayed scenario enacted (issue 18, point 3),
on PostgreSQL (a cluster's store). groundtruthchecks.py says what is checked; test_ground_truth.py
checks the same on the other engine, on the other worker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.roles.jobs import groundtruthchecks

pytestmark = pytest.mark.timeout(groundtruthchecks.TIMEOUT_SECONDS)


@pytest.mark.parametrize("database_engine", ["postgresql"], indirect=True)
def test_lens_figures_match_what_the_scenario_enacted(
    empty_database_url: str, memory_dir: Path
) -> None:
    groundtruthchecks.check_the_replay(empty_database_url, memory_dir)
