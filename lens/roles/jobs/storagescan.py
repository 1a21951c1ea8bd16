"""`lens jobs`' storage scan (the original's StorageScanJob, every minute): the StorageClasses of
JuiceFS, Weka, Ceph and NFS into `storage`, with JuiceFS capacity from metrics.prometheus_url
when one is set (lens/storage/scanning.py), on the leader."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable

import kubernetes
import peewee

from lens.roles.jobs import kubestorage
from lens.roles.jobs.leading import add_leader_loop
from lens.runtime.config import Config
from lens.runtime.process import Process
from lens.runtime.selfmetrics import SelfMetrics
from lens.storage import classes, usage
from lens.storage.rows import StorageRows
from lens.storage.scanning import ScanResult, StorageScan, Usage
from lens.store import freshness

log = logging.getLogger(__name__)


class StorageGauges:
    def __init__(self, metrics: SelfMetrics) -> None:
        self.backends = metrics.gauge(
            "lens_storage_backends",
            "Storage backends (storage rows) the last storage scan found, by kind.",
            ("kind",),
        )
        self.usage_queries = metrics.counter(
            "lens_storage_usage_queries_total",
            "Queries of metrics.prometheus_url for JuiceFS capacity and usage, by result "
            "(success or error).",
            ("result",),
        )

    def show(self, result: ScanResult) -> None:
        for kind in classes.KINDS:
            self.backends.labels(kind).set(sum(row.kind == kind for row in result.rows))
        if result.usage_read is not None:
            self.usage_queries.labels("success" if result.usage_read else "error").inc()


class StorageScanning:
    """The loop's body; `scanned` is told after each scan that succeeded."""

    def __init__(
        self,
        scan: StorageScan,
        gauges: StorageGauges,
        scanned: Callable[[], None] = lambda: None,
    ) -> None:
        self.scan = scan
        self._gauges = gauges
        self._scanned = scanned
        self.last: ScanResult | None = None

    def run(self) -> None:
        result = self.scan.run()
        self._gauges.show(result)
        if result.written:
            log.info("storage rows written", extra={"written": result.written})
        self.last = result
        self._scanned()


def _usage_reader(config: Config) -> Callable[[], Usage] | None:
    if not config.metrics.prometheus_url:
        return None
    queries = usage.PrometheusQueries(config.metrics)
    return lambda: usage.read_juicefs_usage(queries)


def add(
    config: Config,
    process: Process,
    db: peewee.Database,
    *,
    api: kubernetes.client.ApiClient,
    leading: Callable[[], bool],
) -> StorageScanning:
    """The storage scan loop, run by the leader only."""

    def wall_time() -> datetime.datetime:
        return datetime.datetime.fromtimestamp(process.clock.time(), datetime.UTC)

    scan = StorageScan(
        list_classes=lambda: kubestorage.list_storage_classes(api),
        secrets=kubestorage.KubeSecrets(api, cluster=config.cluster.name),
        read_usage=_usage_reader(config),
        rows=StorageRows(db, cluster=config.cluster.name, wall_time=wall_time),
    )
    interval = config.jobs.storage_scan_interval_seconds

    def scanned() -> None:
        freshness.record(
            db,
            cluster=config.cluster.name,
            figure=freshness.STORAGE,
            as_of=wall_time(),
            interval_seconds=interval,
        )

    body = StorageScanning(scan, StorageGauges(process.metrics), scanned)
    add_leader_loop(
        process,
        name="storage-scan",
        interval_seconds=interval,
        run=body.run,
        leading=leading,
    )
    return body
