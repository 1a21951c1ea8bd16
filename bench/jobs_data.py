"""The rows the jobs benchmark's database holds before the jobs run: what the controller, the
agents' inventories and their device reports would have stored for the cluster in the API
emulator — gpu_pods and workloads (the controller's ClusterSync itself writes them), one GPU
device per GPU, GPU-minutes of the last minutes with their holders, and GPU-hours of yesterday
and today — and a count of the rows each job writes."""

from __future__ import annotations

import datetime
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import kubernetes
import peewee

from lens.kube.cluster.allocation import holds_gpus
from lens.kube.machinery.cache import node_of
from lens.kube.machinery.reflector import WatchSettings
from lens.kube.workloads import gpupods
from lens.kube.workloads.clustersync import ClusterSync
from lens.kube.workloads.syncmetrics import SyncMetrics
from lens.reports.storing import partitions
from lens.runtime.config import ControllerConfig
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import database, models

CLUSTER = "default"
RESOURCES = ("amd.com/gpu",)

Holding = tuple[str, str, dict[str, Any]]  # node, GPU uuid, pod


def controller_rows(api: kubernetes.client.ApiClient, db: peewee.Database) -> None:
    """gpu_pods, pod_resources, gpu_workloads and references, as `lens controller` writes them."""
    sync = ClusterSync(
        api,
        db,
        cluster=CLUSTER,
        config=ControllerConfig(),
        watch=WatchSettings(watch_timeout_seconds=300),
        metrics=SyncMetrics(SelfMetrics(process=False)),
        wall_time=lambda: datetime.datetime.now(datetime.UTC),
    )
    sync.start(list_timeout=120)
    try:
        if not sync.wait_idle(300):
            raise RuntimeError("the controller did not store the cluster in 300 s")
    finally:
        sync.stop()


def holdings(pods: list[dict[str, Any]]) -> list[Holding]:
    """Each GPU held now: its node, a uuid, the pod holding it (GPUs given out in pod order)."""
    given: dict[str, int] = {}
    held = []
    for pod in sorted(pods, key=lambda p: str(p["metadata"].get("name"))):
        if not holds_gpus(pod):
            continue
        node = node_of(pod)
        for _ in range(gpupods.gpu_count(pod, RESOURCES)):
            index = given.get(node, 0)
            given[node] = index + 1
            held.append((node, f"GPU-{node}-{index}", pod))
    return held


def agent_rows(
    db: peewee.Database,
    nodes: list[str],
    held: list[Holding],
    now: datetime.datetime,
    *,
    minutes: int,
    hours: int,
) -> None:
    """GPU devices (8 a node), the last `minutes` GPU-minutes and the last `hours` GPU-hours."""
    with database.session(db):
        partitions.ensure_days(
            db, {(now - datetime.timedelta(hours=h)).date() for h in range(hours + 1)}
        )
        devices = [
            {
                "cluster": CLUSTER,
                "node_name": n,
                "uuid": f"GPU-{n}-{i}",
                "gpu_id": i,
                "gpu_model": "AMD Instinct MI300X",
                "driver_version": "6.8.5",
            }
            for n in nodes
            for i in range(8)
        ]
        insert_rows(db, models.GpuDevice, devices)
        last = now.replace(second=0, microsecond=0)
        for back in range(1, minutes + 1):
            add_minute(db, nodes, held, last - datetime.timedelta(minutes=back))
        hour = now.replace(minute=0, second=0, microsecond=0)
        for back in range(1, hours + 1):
            insert_rows(
                db,
                models.GpuHourHolder,
                [
                    _hour_holder(node, uuid, pod, hour - datetime.timedelta(hours=back))
                    for node, uuid, pod in held
                ],
            )


def add_minute(
    db: peewee.Database, nodes: list[str], held: list[Holding], minute: datetime.datetime
) -> None:
    by_uuid = {uuid: pod for _, uuid, pod in held}
    rows, holders = [], []
    for node in nodes:
        for index in range(8):
            uuid = f"GPU-{node}-{index}"
            pod = by_uuid.get(uuid)
            load = 0.0 if pod is None else (0.02 if hash(uuid) % 10 == 0 else 0.8)
            rows.append(
                {
                    "cluster": CLUSTER,
                    "node_name": node,
                    "gpu_uuid": uuid,
                    "gpu_index": index,
                    "minute": minute,
                    "samples": 60,
                    "expected_samples": 60,
                    "utilization_mean_ratio": load,
                    "idle_seconds": 0.0 if pod else 60.0,
                    "holders": 1 if pod else 0,
                }
            )
            if pod is not None:
                meta = pod["metadata"]
                holders.append(
                    {
                        "cluster": CLUSTER,
                        "node_name": node,
                        "gpu_uuid": uuid,
                        "minute": minute,
                        "container_id": f"cid-{meta['uid']}",
                        "namespace": meta["namespace"],
                        "pod_name": meta["name"],
                        "pod_uid": meta["uid"],
                        "container_name": "main",
                        "seconds": 60.0,
                        "held_seconds": 60.0,
                    }
                )
    with database.session(db):
        insert_rows(db, models.GpuMinuteReport, rows)
        insert_rows(db, models.GpuMinuteHolder, holders)


def _hour_holder(
    node: str, uuid: str, pod: dict[str, Any], hour: datetime.datetime
) -> dict[str, object]:
    meta = pod["metadata"]
    return {
        "cluster": CLUSTER,
        "node_name": node,
        "gpu_uuid": uuid,
        "hour": hour,
        "container_id": f"cid-{meta['uid']}",
        "namespace": meta["namespace"],
        "pod_name": meta["name"],
        "pod_uid": meta["uid"],
        "container_name": "main",
        "minutes": 60,
        "seconds": 3600.0,
        "held_seconds": 3600.0,
        "measured_seconds": 3600.0,
        "used_seconds": 2880.0,
    }


def insert_rows(
    db: peewee.Database, model: type[models.LensModel], rows: list[dict[str, object]]
) -> None:
    """`rows` inserted in chunks, in one transaction."""
    with db.atomic():
        for chunk in peewee.chunked(rows, 2000):
            model.insert_many(chunk).execute()


FRESHNESS_TABLE = models.FigureFreshness._meta.table_name


class WriteCounter:
    """Rows inserted, updated and deleted through `db` while counting (the cursor's rowcount of
    each INSERT, UPDATE and DELETE this process sends), per thread that sent them — those of
    figure_freshness apart: the one row a run says when it measured, whatever it found."""

    def __init__(self, db: peewee.Database) -> None:
        self._db = db
        self._local = threading.local()
        original = db.execute_sql

        def counted(sql: str, params: Any = None, *args: Any, **kwargs: Any) -> Any:
            cursor = original(sql, params, *args, **kwargs)
            verb = sql.lstrip()[:6].upper()
            if (
                verb in ("INSERT", "UPDATE", "DELETE")
                and getattr(self._local, "rows", None) is not None
            ):
                if FRESHNESS_TABLE in sql:
                    self._local.freshness += max(0, cursor.rowcount)
                else:
                    self._local.rows += max(0, cursor.rowcount)
            return cursor

        db.execute_sql = counted  # type: ignore[method-assign]

    @contextmanager
    def counting(self) -> Iterator[list[int]]:
        """Yields a list holding, once the block ends, the rows written in it: [rows of the
        job's own tables, rows of figure_freshness]."""
        found = [0, 0]
        self._local.rows = 0
        self._local.freshness = 0
        try:
            yield found
        finally:
            found[:] = [self._local.rows, self._local.freshness]
            self._local.rows = None
