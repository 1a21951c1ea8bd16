"""Rows/s of the batched upsert against the original's one-row select-then-insert-or-save.

The original (REFERENCE.md 1.11) wrote each row with a SELECT by its key, then an INSERT or a
full-row save, each statement its own transaction. Both ways write the same rows twice (a load,
then an update of every row) into gpu_pods on a migrated database, on SQLite and PostgreSQL;
each way runs `--repeat` times on a fresh database and the median rate counts.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import peewee

from bench import databases
from lens.runtime.config import DatabaseConfig
from lens.store import database, migrating, models, upserting

Rows = list[dict[str, object]]


def _rows(count: int, *, phase: str) -> Rows:
    now = datetime.datetime.now(datetime.UTC)
    return [
        {
            "cluster": "bench",
            "uid": f"{i:08d}-0000-4000-8000-000000000000",
            "namespace": f"team-{i % 50}",
            "name": f"train-{i // 8}-worker-{i % 8}",
            "node_name": f"gpu-node-{i % 1000:04d}",
            "gpu_allocated": 8,
            "phase": phase,
            "running": phase == "Running",
            "deleted": False,
            "ip": f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}",
            "updated_at": now,
        }
        for i in range(count)
    ]


def write_batched(rows: Rows) -> None:
    upserting.upsert(models.GpuPod, rows)


def write_one_by_one(rows: Rows) -> None:
    """The original's pattern: SELECT by key, then INSERT or save every column, autocommit."""
    pod = models.GpuPod
    for row in rows:
        existing = pod.get_or_none((pod.cluster == row["cluster"]) & (pod.uid == row["uid"]))
        if existing is None:
            pod.create(**row)
        else:
            for column, value in row.items():
                setattr(existing, column, value)
            existing.save()


@contextmanager
def _database(engine: str) -> Iterator[peewee.Database]:
    with databases.fresh_database_url(engine) as url:
        db = database.open_database(DatabaseConfig(url=url))
        try:
            yield db
        finally:
            database.close_all(db)


def _rate(engine: str, write: Callable[[Rows], None], count: int) -> float:
    """Rows written per second over a load and a full update of `count` rows."""
    with _database(engine) as db:
        migrating.migrate(db)
        load, update = _rows(count, phase="Pending"), _rows(count, phase="Running")
        with database.session(db):
            started = time.perf_counter()
            write(load)
            write(update)
            elapsed = time.perf_counter() - started
        assert models.GpuPod.select().where(models.GpuPod.phase == "Running").count() == count
    return 2 * count / elapsed


def run(argv: list[str]) -> dict[str, object]:
    parser = argparse.ArgumentParser(prog="python -m bench upsert")
    parser.add_argument("--rows", type=int, default=5000, help="rows per pass (default 5000)")
    parser.add_argument("--engines", default="sqlite,postgresql", help="comma-separated engines")
    parser.add_argument("--repeat", type=int, default=3, help="runs per way; the median counts")
    args = parser.parse_args(argv)
    figures: dict[str, object] = {
        "rows_per_pass": args.rows,
        "passes": 2,
        "repeat": args.repeat,
        "table": "gpu_pods",
    }
    for engine in args.engines.split(","):
        batched = statistics.median(
            _rate(engine, write_batched, args.rows) for _ in range(args.repeat)
        )
        original = statistics.median(
            _rate(engine, write_one_by_one, args.rows) for _ in range(args.repeat)
        )
        figures[engine] = {
            "batched_upsert_rows_per_s": round(batched),
            "select_then_insert_or_save_rows_per_s": round(original),
            "ratio": round(batched / original, 1),
        }
    return figures
