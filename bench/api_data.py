"""What the API benchmark adds to the jobs benchmark's rows (jobs_data.py) so that each route
it asks has the data a running cluster would give it: the GPU-hours the rollup would have made
of the last hours, a day of GPU-minutes of every GPU with their VRAM and power (and each pod's
sums of them, gpu_minute_pods), and a workload's training iterations of the day (one every
TRAINING_SECONDS).

A workload's day is read from minutes at the dashboard's steps (timerange.py reads hours only
past MINUTE_ROWS_AT_MOST rows or at steps of an hour). Its cost depends on how many rows the
tables hold around it (the plan PostgreSQL picks does), so every GPU's day is there, not the
workload's alone: 11.5 million GPU-minutes at 8,000 GPUs.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Iterator
from typing import Any

import peewee

from bench import jobs_data
from lens.reports.storing import podminutes
from lens.store import database, models

DAY_MINUTES = 24 * 60
TRAINING_SECONDS = 10
VRAM_BYTES = 192 * 2**30  # an MI300X's


def gpu_hours(db: Any, nodes: list[str], now: datetime.datetime, *, hours: int) -> None:
    """The GPU-hours the rollup would have made of the last `hours` hours of every GPU
    (jobs_data writes their holders only): what a day's series of the cluster reads."""
    hour = now.replace(minute=0, second=0, microsecond=0)
    rows: list[dict[str, object]] = [
        {
            "cluster": jobs_data.CLUSTER,
            "node_name": node,
            "gpu_uuid": f"GPU-{node}-{index}",
            "gpu_index": index,
            "hour": hour - datetime.timedelta(hours=back),
            "minutes": 60,
            "samples": 3600,
            "expected_samples": 3600,
            "utilization_mean_ratio": 0.6,
            "vram_used_mean_bytes": 96 * 2**30,
            "power_mean_watts": 550.0,
            "energy_minutes": 60,
            "temperature_max_celsius": 70.0,
            "idle_seconds": 0.0,
        }
        for back in range(1, hours + 1)
        for node in nodes
        for index in range(8)
    ]
    with database.session(db):
        jobs_data.insert_rows(db, models.GpuHour, rows)


def _figures(db: Any) -> None:
    """VRAM and power in the GPU-minutes jobs_data wrote (it leaves them unknown), and each
    GPU's VRAM in its device row: a held GPU uses VRAM and power with its utilization, an idle
    one little, so the workload's and the cluster's memory and power series have points."""
    minute, device = models.GpuMinuteReport, models.GpuDevice
    held = minute.holders > 0
    load = minute.utilization_mean_ratio
    with database.session(db):
        device.update(vram_bytes=VRAM_BYTES).where(device.cluster == jobs_data.CLUSTER).execute()
        minute.update(
            vram_used_mean_bytes=peewee.Case(None, [(held, 0.8 * VRAM_BYTES * load)], 2**29),
            power_mean_watts=peewee.Case(None, [(held, 150.0 + 550.0 * load)], 140.0),
        ).where(minute.cluster == jobs_data.CLUSTER).execute()


def _copied_back(db: Any, model: type[models.LensModel], copies: int, minutes: int) -> int:
    """Every row of `model` (a minute table) copied `copies` times, each `minutes` earlier
    than the last, in one statement on the server (PostgreSQL): the rows written."""
    table = model._meta.table_name
    columns = [f.column_name for f in model._meta.sorted_fields if f.name != "id"]
    shifted = [
        f'"{c}" - make_interval(mins => {minutes} * k)' if c == "minute" else f'"{c}"'
        for c in columns
    ]
    named = ", ".join(f'"{c}"' for c in columns)
    sql = (
        f'INSERT INTO "{table}" ({named}) SELECT {", ".join(shifted)} '
        f'FROM "{table}" CROSS JOIN generate_series(1, %s) AS k'
    )
    with database.session(db), db.atomic():
        return int(database.execute(db, sql, (copies,)).rowcount)


def a_day_of_minutes(db: Any, *, minutes: int, now: datetime.datetime) -> dict[str, int]:
    """The last `minutes` GPU-minutes of every GPU, with their holders, repeated back to a day
    ago, and each pod's sums of them: a day of minutes of the whole cluster, as the agents
    would have written it (and retention keeps 8 days of them). The rows written to each
    table."""
    _figures(db)
    copies = DAY_MINUTES // minutes - 1
    return {
        "gpu_minutes": _copied_back(db, models.GpuMinuteReport, copies, minutes),
        "gpu_minute_holders": _copied_back(db, models.GpuMinuteHolder, copies, minutes),
        "gpu_minute_pods": pod_minutes(db, now),
    }


def pod_minutes(db: Any, now: datetime.datetime) -> int:
    """gpu_minute_pods of every minute of the last day, as the writer sums them: jobs_data
    writes the minutes without the writer. One statement (a merge join along both tables'
    unique keys; ranges of an hour would each walk the whole day's index), after the tables'
    statistics are brought up to their day of rows."""
    with database.session(db):
        database.execute(db, "ANALYZE gpu_minutes, gpu_minute_holders")
    first = now - datetime.timedelta(days=1, hours=1)
    last = now + datetime.timedelta(hours=1)
    return podminutes.rebuild(db, cluster=jobs_data.CLUSTER, first=first, last=last)


def training_day(db: Any, uid: str, pod_uid: str, now: datetime.datetime) -> int:
    """An iteration every TRAINING_SECONDS over the last day, as the log intake stores them;
    the rows written."""
    count = DAY_MINUTES * 60 // TRAINING_SECONDS
    first = now - datetime.timedelta(days=1)
    rows: list[dict[str, object]] = [
        {
            "cluster": jobs_data.CLUSTER,
            "pod_uuid": pod_uid,
            "workload_uid": uid,
            "serial": 1,
            "iteration": number + 1,
            "performance": {"tflops": 400.0 + number % 7, "elapsed_time_per_iteration_ms": 1e4},
            "created_at": first + datetime.timedelta(seconds=TRAINING_SECONDS * (number + 1)),
        }
        for number in range(count)
    ]
    with database.session(db):
        jobs_data.insert_rows(db, models.TrainingPerformance, rows)
    return count


def pods_of(db: Any, uid: str) -> set[str]:
    """The uids of the pods workload_pod_references links to workload `uid`."""
    reference = models.WorkloadPodReference
    query = reference.select(reference.pod_uid).where(
        (reference.cluster == jobs_data.CLUSTER) & (reference.workload_uid == uid)
    )
    with database.session(db):
        return {str(pod) for (pod,) in database.tuple_rows(query.tuples())}


@contextlib.contextmanager
def from_holder_rows(db: Any) -> Iterator[None]:
    """While in it, the workload series are read as before gpu_minute_pods: from the holder
    rows joined to their GPU-minutes and devices (the cluster's gpu_minute_pods start after
    every minute, as for minutes written before migration 0011)."""
    start = models.RollupStart
    rollup = models.GpuMinutePod._meta.table_name
    never = datetime.datetime(9999, 12, 31, tzinfo=datetime.UTC)
    with database.session(db):
        start.insert(cluster=jobs_data.CLUSTER, rollup=rollup, since=never).execute()
    try:
        yield
    finally:
        with database.session(db):
            start.delete().where(start.cluster == jobs_data.CLUSTER).execute()
