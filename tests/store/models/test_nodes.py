from __future__ import annotations

import datetime
import shutil
from pathlib import Path

import peewee

from lens.runtime.config import DatabaseConfig
from lens.store import database, migrating, models
from lens.store.models import nodes

from .conftest import check_tables

DEVICE_MODELS = (nodes.GpuDevice, nodes.RdmaDevice, nodes.NodeDeviceChangelog)


def test_tables_and_their_natural_keys() -> None:
    check_tables(
        [
            (nodes.GpuDevice, "gpu_devices", ("cluster", "node_name", "uuid"), False),
            (nodes.Node, "nodes", ("cluster", "name"), False),
            (
                nodes.NodeDeviceChangelog,
                "node_device_changelog",
                ("cluster", "node_name", "created_at", "id"),
                True,
            ),
            (nodes.RdmaDevice, "rdma_devices", ("cluster", "node_name", "ifname"), False),
        ]
    )


def _columns(db: peewee.Database, table: str) -> dict[str, tuple[str, bool]]:
    """Each column's type (with its length or precision) and whether it takes NULL."""
    if isinstance(db, peewee.SqliteDatabase):
        rows = db.execute_sql(f'PRAGMA table_info("{table}")').fetchall()
        return {name: (kind.upper(), not notnull) for _, name, kind, notnull, _, _ in rows}
    schema = "current_schema()" if isinstance(db, peewee.PostgresqlDatabase) else "database()"
    rows = db.execute_sql(
        "SELECT column_name, data_type, character_maximum_length, datetime_precision, is_nullable"
        f" FROM information_schema.columns WHERE table_name = %s AND table_schema = {schema}",
        (table,),
    ).fetchall()
    return {
        name: (f"{kind}({length}, {precision})", nullable == "YES")
        for name, kind, length, precision, nullable in rows
    }


def test_the_migrated_device_tables_have_the_models_types_and_nulls(
    freshly_migrated_db: peewee.Database,
) -> None:
    db = freshly_migrated_db
    # schema_diff compares names only: make each model's table afresh beside the migrated one.
    for model in DEVICE_MODELS:
        table = model._meta.table_name

        class Fresh(model):  # type: ignore[misc,valid-type]  # a copy under another name
            class Meta:
                table_name = f"fresh_{table}"
                indexes = ()

        db.create_tables([Fresh])
        assert _columns(db, table) == _columns(db, f"fresh_{table}"), table


def test_the_originals_gpu_rows_get_a_uuid_per_index_and_survive_the_migration(
    empty_database_url: str, tmp_path: Path
) -> None:
    directory = tmp_path / "migrations"
    directory.mkdir()
    for path in sorted(migrating.MIGRATIONS_DIR.glob("000[12]_*.py")):
        shutil.copy(path, directory)
    db = database.open_database(DatabaseConfig(url=empty_database_url))
    try:
        migrating.migrate(db, directory=directory)
        at = datetime.datetime(2027, 1, 1, tzinfo=datetime.UTC)
        for index in (0, 1):
            db.execute_sql(
                "INSERT INTO gpu_devices (cluster, node_name, gpu_id, gpu_model, memory, serial,"
                f" created_at, updated_at) VALUES ('c1', 'n1', {index}, 'MI300X', 196592,"
                f" 'S{index}', {db.param}, {db.param})",
                (models.GpuDevice.created_at.db_value(at),) * 2,
            )
        shutil.copy(migrating.MIGRATIONS_DIR / "0004_device_inventory.py", directory)
        assert migrating.migrate(db, directory=directory) == ["0004_device_inventory"]
        gpu = models.GpuDevice  # the columns 0004 knows of (later ones add more)
        rows = gpu.select(gpu.uuid, gpu.gpu_id, gpu.serial, gpu.memory, gpu.deleted_at).order_by(
            gpu.gpu_id
        )
        assert [(r.uuid, r.gpu_id, r.serial, r.memory, r.deleted_at) for r in rows] == [
            ("index:0", 0, "S0", 196592, None),
            ("index:1", 1, "S1", 196592, None),
        ]
    finally:
        database.close_all(db)
