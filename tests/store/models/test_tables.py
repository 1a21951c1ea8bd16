from __future__ import annotations

import peewee
from playhouse.schema_diff import diff_models

from lens.store import models

SEED_TABLE_NAMES = {
    "nodes",
    "gpu_devices",
    "rdma_devices",
    "node_device_changelog",
    "gpu_pods",
    "gpu_pods_events",
    "pod_snapshots",
    "pod_resources",
    "gpu_workloads",
    "gpu_workload_snapshots",
    "workload_pod_references",
    "node_containers",
    "node_container_devices",
    "node_container_events",
    "training_performance",
    "workload_events",
    "storage",
}
# Lens's own (issue 17): node device reports and their hourly rollup.
REPORT_TABLE_NAMES = {
    "gpu_minutes",
    "gpu_minute_holders",
    "rdma_port_minutes",
    "gpu_hours",
    "gpu_hour_holders",
    "gpu_hours_pending",
}
# Lens's own (issue 18): idle GPUs and GPU-hours per day.
USAGE_TABLE_NAMES = {"gpu_idle_intervals", "gpu_hours_daily"}
# Lens's own (issue 21): training stragglers.
TRAINING_TABLE_NAMES = {"training_stragglers"}
# Lens's own (issue 19): each pod's GPU-minute sums for workload series, and where they start.
ROLLUP_TABLE_NAMES = {"gpu_minute_pods", "rollup_starts"}
# Lens's own (issue 36): when each figure the API serves was measured.
FRESHNESS_TABLE_NAMES = {"figure_freshness"}


def test_every_table_of_the_system_is_modelled_and_nothing_else() -> None:
    # event_streams is Lens's own: the event server's committed sequence per agent boot.
    assert {m._meta.table_name for m in models.ALL_MODELS} == (
        SEED_TABLE_NAMES
        | {"event_streams"}
        | REPORT_TABLE_NAMES
        | USAGE_TABLE_NAMES
        | TRAINING_TABLE_NAMES
        | ROLLUP_TABLE_NAMES
        | FRESHNESS_TABLE_NAMES
    )
    dead = {"fault", "ai_workload_metadata", "workload_resource", "gpu_workload_allocation_history"}
    assert not dead & {m._meta.table_name for m in models.ALL_MODELS}


def test_every_table_has_a_cluster_and_a_natural_key_that_starts_with_it() -> None:
    for model in models.ALL_MODELS:
        key = models.natural_key(model)
        assert key[0].name == "cluster", model.__name__
        assert len([i for i in model._meta.indexes if i[1]]) == 1, model.__name__


def test_append_only_tables_can_be_trimmed_by_creation_time() -> None:
    names = {m._meta.table_name for m in models.APPEND_ONLY_MODELS}
    assert names == {
        "node_device_changelog",
        "gpu_pods_events",
        "pod_snapshots",
        "gpu_workload_snapshots",
        "node_container_events",
        "training_performance",
        "workload_events",
    }
    for model in models.APPEND_ONLY_MODELS:
        assert (("created_at",), False) in model._meta.indexes, model.__name__


def test_hot_queries_are_indexed() -> None:
    def covered(model: type[models.LensModel], columns: tuple[str, ...]) -> bool:
        return any(tuple(index[: len(columns)]) == columns for index, _ in model._meta.indexes)

    hot = [
        (models.GpuPod, ("cluster", "uid")),
        (models.GpuPod, ("cluster", "node_name", "running")),
        (models.GpuWorkload, ("cluster", "uid")),
        (models.GpuWorkload, ("cluster", "parent_uid")),
        (models.GpuWorkload, ("cluster", "status")),
        (models.GpuWorkload, ("cluster", "end_at")),
        (models.WorkloadPodReference, ("cluster", "pod_uid")),
        (models.WorkloadPodReference, ("cluster", "workload_uid")),
        (models.NodeContainer, ("cluster", "pod_uid")),
        (models.NodeContainerDevice, ("cluster", "container_id")),
        (models.NodeContainerEvent, ("cluster", "container_id")),
        (models.TrainingPerformance, ("cluster", "workload_uid", "created_at")),
        (models.WorkloadEvent, ("cluster", "workload_uid")),
        (models.WorkloadEvent, ("cluster", "nearest_workload_uid")),
        (models.PodSnapshot, ("cluster", "pod_uid", "resource_version")),
    ]
    for model, columns in hot:
        assert covered(model, columns), (model.__name__, columns)


class _Schema:
    """The database as diff_models reads it, partitioned tables' indexes included: peewee lists
    the indexes of plain tables only (relkind 'r'), and PostgreSQL's partitioned ones are 'p'."""

    def __init__(self, db: peewee.Database) -> None:
        self._db = db

    def get_tables(self, schema: str | None = None) -> list[str]:
        return self._db.get_tables(schema)

    def get_columns(self, table: str, schema: str | None = None) -> list[peewee.ColumnMetadata]:
        return self._db.get_columns(table, schema)

    def get_indexes(self, table: str, schema: str | None = None) -> list[peewee.IndexMetadata]:
        indexes = self._db.get_indexes(table, schema)
        if indexes or not isinstance(self._db, peewee.PostgresqlDatabase):
            return indexes
        cursor = self._db.execute_sql(
            "SELECT i.relname, x.indisunique, ARRAY(SELECT pg_get_indexdef(x.indexrelid, k + 1,"
            " TRUE) FROM generate_subscripts(x.indkey, 1) AS k ORDER BY k)"
            " FROM pg_class t JOIN pg_index x ON x.indrelid = t.oid"
            " JOIN pg_class i ON i.oid = x.indexrelid"
            " WHERE t.relname = %s AND t.relkind = 'p'"
            " AND t.relnamespace = current_schema()::regnamespace",
            (table,),
        )
        return [
            peewee.IndexMetadata(name, "", [c.strip('"') for c in columns], unique, table)
            for name, unique, columns in cursor.fetchall()
        ]


def test_the_migrated_schema_is_exactly_the_models(
    freshly_migrated_db: peewee.Database,
) -> None:
    db = freshly_migrated_db
    diff = diff_models(_Schema(db), list(models.ALL_MODELS))
    assert not diff, str(diff)


def test_the_copied_schema_the_other_tests_use_is_the_models_too(db: peewee.Database) -> None:
    # tests/databases.py copies a migrated template (CREATE TABLE ... LIKE on MariaDB).
    diff = diff_models(_Schema(db), list(models.ALL_MODELS))
    assert not diff, str(diff)
