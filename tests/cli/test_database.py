from __future__ import annotations

import json
from pathlib import Path

import pytest

from lens.store import migrating

from .conftest import run_lens

MIGRATIONS = len(list(migrating.MIGRATIONS_DIR.glob("[0-9][0-9][0-9][0-9]_*.py")))


@pytest.mark.slow_timeout  # four `lens` processes, each half a second on a slow host
def test_db_migrate_and_status_on_the_embedded_default(tmp_path: Path) -> None:
    env = {"LENS_SERVICE__DATA_DIR": str(tmp_path), "LENS_LOGGING__FORMAT": "json"}
    before = run_lens("db", "status", "--check", env=env)
    assert before.returncode == 1
    assert "pending" in before.stdout
    first = run_lens("db", "migrate", env=env)
    assert first.returncode == 0, first.stderr
    applied = f"applied {MIGRATIONS} migration(s): 0001_initial, 0002_"
    assert first.stdout.strip().startswith(applied)
    logged = [json.loads(line) for line in first.stderr.splitlines()]
    assert {"msg": "migration applied", "migration": "0001_initial"}.items() <= logged[
        -MIGRATIONS
    ].items()
    assert (tmp_path / "lens.db").exists()
    second = run_lens("db", "migrate", env=env)
    assert second.stdout.strip() == "schema is up to date"
    after = run_lens("db", "status", "--check", env=env)
    assert after.returncode == 0
    assert "0001_initial" in after.stdout
    assert "schema is up to date" in after.stdout


def test_db_commands_report_an_unreachable_database_in_one_line() -> None:
    env = {"LENS_DATABASE__URL": "postgresql://lens:hunter2@127.0.0.1:1/lens"}
    result = run_lens("db", "migrate", env=env)
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith("lens:")]
    assert lines and lines[0].startswith("lens: database error: cannot connect to the database")
    assert "hunter2" not in result.stderr
