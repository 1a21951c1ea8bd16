from __future__ import annotations

import shutil
from pathlib import Path

import peewee
import pytest

from lens.runtime.config import DatabaseConfig
from lens.store import database, migrating
from lens.store.models import training

from .conftest import check_tables


def test_stragglers_are_keyed_by_their_run_source_and_start() -> None:
    check_tables(
        [
            (
                training.TrainingStraggler,
                "training_stragglers",
                ("cluster", "workload_uid", "serial", "source", "started_at"),
                False,
            )
        ]
    )


def _columns(db: peewee.Database, table: str) -> list[tuple[str, str, bool]]:
    return sorted((c.name, c.data_type.lower(), c.null) for c in db.get_columns(table))


@pytest.mark.slow_timeout
def test_the_migration_makes_the_models_table_on_a_database_of_the_earlier_ones(
    empty_database_url: str, tmp_path: Path
) -> None:
    directory = tmp_path / "migrations"
    directory.mkdir()
    for path in sorted(migrating.MIGRATIONS_DIR.glob("000[1-8]_*.py")):
        shutil.copy(path, directory)
    db = database.open_database(DatabaseConfig(url=empty_database_url))
    try:
        migrating.migrate(db, directory=directory)
        assert "training_stragglers" not in db.get_tables()
        shutil.copy(migrating.MIGRATIONS_DIR / "0009_training_stragglers.py", directory)
        assert migrating.migrate(db, directory=directory) == ["0009_training_stragglers"]

        class Fresh(training.TrainingStraggler):
            class Meta:
                table_name = "fresh_training_stragglers"
                indexes = ()

        db.create_tables([Fresh])
        assert _columns(db, "training_stragglers") == _columns(db, "fresh_training_stragglers")
        indexes = db.get_indexes("training_stragglers")
        unique = [i.columns for i in indexes if i.unique and i.columns != ["id"]]
        assert unique == [["cluster", "workload_uid", "serial", "source", "started_at"]]
    finally:
        database.close_all(db)
