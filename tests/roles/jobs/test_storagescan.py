"""The storage scan in `lens jobs` against the API emulator: one LIST and one GET per Secret a
scan, rows written only when something changed, a class removed soft-deleted, a Secret's content
never stored, capacity absent without a query API; the storage figures as of the last scan."""

from __future__ import annotations

import json
from collections.abc import Callable

import kubernetes
import peewee

from lens.roles.jobs import storagescan
from lens.runtime.config import ClusterConfig, Config, MetricsConfig
from lens.runtime.process import Process
from lens.sim.kube.server import KubeApiServer
from lens.storage.secrets import SecretRef
from lens.store import freshness, models
from tests.roles.jobs.storageobjects import put_secret, storage_class

METAURL = "redis://:hunter2@redis.jfs:6379/1"


def _cluster(apiserver: KubeApiServer) -> None:
    put_secret(
        apiserver,
        SecretRef(namespace="kube-system", name="jfs-secret"),
        {"name": "datasets", "metaurl": METAURL, "secret-key": "wJalrXUtnFEMI"},
    )
    secret_ref = {
        "csi.storage.k8s.io/provisioner-secret-name": "jfs-secret",
        "csi.storage.k8s.io/provisioner-secret-namespace": "kube-system",
    }
    apiserver.create(storage_class("jfs", "csi.juicefs.com", **secret_ref))
    apiserver.create(storage_class("weka", "csi.weka.io", filesystemName="default"))
    apiserver.create(storage_class("nfs", "nfs.csi.k8s.io", server="nfs.lan", share="/x"))
    apiserver.create(storage_class("gp3", "ebs.csi.aws.com"))


def _add(
    db: peewee.Database, api: kubernetes.client.ApiClient, metrics: MetricsConfig | None = None
) -> tuple[Process, storagescan.StorageScanning]:
    config = Config(cluster=ClusterConfig(name="home"), metrics=metrics or MetricsConfig())
    process = Process("jobs", server=config.server, service=config.service, handle_signals=False)
    body = storagescan.add(config, process, db, api=api, leading=lambda: True)
    return process, body


def _requests(apiserver: KubeApiServer) -> dict[tuple[str, str], int]:
    return {k: v for k, v in apiserver.requests().items() if "/api" in k[1]}


def test_a_scan_writes_rows_then_nothing_until_a_class_goes(
    apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient, db: peewee.Database
) -> None:
    _cluster(apiserver)
    process, body = _add(db, api_client)
    assert process.loops.runs("storage-scan") == 0  # the loop is on the process's runner
    body.run()
    assert body.last is not None and body.last.written == 3
    assert body.last.usage_read is None
    rows = {row.name: row for row in models.Storage.select()}
    assert {(r.kind, n) for n, r in rows.items()} == {
        ("juicefs", "datasets"),
        ("weka", "weka"),
        ("nfs", "nfs"),
    }
    assert rows["datasets"].cluster == "home"
    assert rows["datasets"].capacity_bytes is None, "no metrics.prometheus_url: absent"
    stored = json.dumps([list(row.__data__.values()) for row in rows.values()], default=str)
    assert "hunter2" not in stored and "wJalrXUtnFEMI" not in stored
    value = process.metrics.registry.get_sample_value
    assert value("lens_storage_backends", {"kind": "juicefs"}) == 1
    assert value("lens_storage_backends", {"kind": "ceph"}) == 0

    scanned = freshness.read(db, cluster="home", figures=[freshness.STORAGE])
    assert scanned[freshness.STORAGE].stale_after_seconds == 120.0  # the scan's 60 s twice

    before = _requests(apiserver)
    body.run()
    assert body.last.written == 0, "nothing changed: nothing written"
    again = freshness.read(db, cluster="home", figures=[freshness.STORAGE])
    assert again[freshness.STORAGE].as_of >= scanned[freshness.STORAGE].as_of
    after = _requests(apiserver)
    asked = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    assert asked == {
        ("GET", "/apis/storage.k8s.io/v1/storageclasses"): 1,
        ("GET", "/api/v1/namespaces/kube-system/secrets/jfs-secret"): 1,
    }

    storage_classes = apiserver.resource("storage.k8s.io/v1", "StorageClass")
    apiserver.store.delete(storage_classes, None, "weka")
    body.run()
    assert body.last.written == 1
    assert models.Storage.get(models.Storage.name == "weka").deleted_at is not None
    assert value("lens_storage_backends", {"kind": "weka"}) == 0


def test_a_query_api_that_fails_is_counted_and_the_rows_still_written(
    apiserver: KubeApiServer,
    api_client: kubernetes.client.ApiClient,
    db: peewee.Database,
    free_port: Callable[[], int],
) -> None:
    _cluster(apiserver)
    metrics = MetricsConfig(prometheus_url=f"http://127.0.0.1:{free_port()}")
    process, body = _add(db, api_client, metrics)
    body.run()
    assert body.last is not None and body.last.usage_read is False and body.last.written == 3
    value = process.metrics.registry.get_sample_value
    assert value("lens_storage_usage_queries_total", {"result": "error"}) == 1
