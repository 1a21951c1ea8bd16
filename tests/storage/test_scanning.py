"""One storage scan: classes to rows, JuiceFS volumes named from their Secrets (and nothing else
of them kept), figures from the query API, and a failing API writing nothing."""

from __future__ import annotations

import datetime
import json
import logging
from collections.abc import Callable, Mapping

import peewee
import pytest

from lens.runtime import errors
from lens.storage import secrets
from lens.storage.rows import StorageRows
from lens.storage.scanning import StorageScan, Usage
from lens.storage.secrets import SecretData, SecretRef
from lens.storage.usage import VolumeUsage
from lens.store import models

NOW = datetime.datetime(2025, 3, 1, tzinfo=datetime.UTC)
METAURL = "redis://:hunter2@redis.jfs:6379/1"


class MemorySecrets:
    """Secrets of a cluster held in memory; `failing` makes every read fail as an API would."""

    def __init__(self) -> None:
        self.stored: dict[SecretRef, SecretData] = {}
        self.reads: list[SecretRef] = []
        self.failing: errors.LensError | None = None

    def put(self, ref: str, **texts: str) -> None:
        data = {key: secrets.encode_text(text) for key, text in texts.items()}
        self.stored[SecretRef.parse(ref)] = SecretData(data=data, resource_version="1")

    def read(self, ref: SecretRef) -> SecretData | None:
        self.reads.append(ref)
        if self.failing is not None:
            raise self.failing
        return self.stored.get(ref)

    def create(self, ref: SecretRef, data: Mapping[str, str]) -> None:
        raise AssertionError("the scan never writes a Secret")

    def replace(self, ref: SecretRef, data: Mapping[str, str], *, previous: SecretData) -> None:
        raise AssertionError("the scan never writes a Secret")


def _class(name: str, provisioner: str, secret: str = "", **parameters: str) -> dict[str, object]:
    if secret:
        namespace, _, secret_name = secret.partition("/")
        parameters["csi.storage.k8s.io/provisioner-secret-name"] = secret_name
        parameters["csi.storage.k8s.io/provisioner-secret-namespace"] = namespace
    return {"metadata": {"name": name}, "provisioner": provisioner, "parameters": parameters}


CLASSES = [
    _class("jfs", "csi.juicefs.com", "kube-system/jfs"),
    _class("jfs-retain", "csi.juicefs.com", "kube-system/jfs"),
    _class("weka", "csi.weka.io", filesystemName="default"),
    _class("ceph", "rook-ceph.rbd.csi.ceph.com", "rook-ceph/rbd-provisioner", pool="replica"),
    _class("local", "rancher.io/local-path"),
]


def _scan(
    db: peewee.Database,
    store: MemorySecrets,
    listing: list[dict[str, object]],
    read_usage: Callable[[], Usage] | None = None,
) -> StorageScan:
    return StorageScan(
        list_classes=lambda: {"items": listing},
        secrets=store,
        read_usage=read_usage,
        rows=StorageRows(db, cluster="home", wall_time=lambda: NOW),
    )


def _by_name() -> dict[str, models.Storage]:
    return {row.name: row for row in models.Storage.select()}


def test_classes_become_rows_and_a_secret_only_a_reference(db: peewee.Database) -> None:
    store = MemorySecrets()
    store.put("kube-system/jfs", name="datasets", metaurl=METAURL, **{"secret-key": "AKIA"})
    scan = _scan(db, store, CLASSES)
    result = scan.run()
    assert result.written == 3 and result.usage_read is None
    rows = _by_name()
    assert sorted(rows) == ["ceph", "datasets", "weka"]
    assert rows["datasets"].config["storage_classes"] == ["jfs", "jfs-retain"]
    assert rows["datasets"].config["meta_secret"] == {"Namespace": "kube-system", "Name": "jfs"}
    assert (rows["ceph"].kind, rows["ceph"].config["parameters"]) == ("ceph", {"pool": "replica"})
    assert store.reads == [SecretRef.parse("kube-system/jfs")], "one GET per Secret, none else"
    stored = json.dumps([list(r.__data__.values()) for r in rows.values()], default=str)
    for content in (METAURL, "hunter2", "AKIA", secrets.encode_text(METAURL)):
        assert content not in stored
    assert rows["datasets"].capacity_bytes is None, "no query API: no figures"
    assert scan.run().written == 0


def test_a_volume_that_cannot_be_named_is_named_after_its_class(
    db: peewee.Database, caplog: pytest.LogCaptureFixture
) -> None:
    store = MemorySecrets()
    store.put("kube-system/nameless", metaurl=METAURL)
    listing = [
        _class("templated", "csi.juicefs.com", "${pvc.namespace}/jfs"),
        _class("missing", "csi.juicefs.com", "kube-system/gone"),
        _class("nameless", "csi.juicefs.com", "kube-system/nameless"),
        _class("bare", "juicedata.com"),
    ]
    scan = _scan(db, store, listing)
    with caplog.at_level(logging.WARNING, logger="lens.storage.scanning"):
        scan.run()
        scan.run()
    assert sorted(_by_name()) == ["bare", "missing", "nameless", "templated"]
    reasons = [r.__dict__["reason"] for r in caplog.records]
    assert len(reasons) == 4, "one line per class, not one per scan"
    assert "secret kube-system/gone does not exist" in reasons
    assert "secret kube-system/nameless has no key name" in reasons
    store.failing = errors.Forbidden("secrets is forbidden")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="lens.storage.scanning"):
        assert scan.run().written == 0
    assert any("may not be read" in r.__dict__["reason"] for r in caplog.records)


def test_an_api_failing_mid_scan_writes_nothing(db: peewee.Database) -> None:
    store = MemorySecrets()
    store.put("kube-system/jfs", name="datasets")
    scan = _scan(db, store, CLASSES)
    store.failing = errors.KubeError("get secret kube-system/jfs: 500 Internal Server Error")
    with pytest.raises(errors.KubeError):
        scan.run()
    assert models.Storage.select().count() == 0


def test_figures_come_from_the_query_api_and_stay_while_it_fails(
    db: peewee.Database, caplog: pytest.LogCaptureFixture
) -> None:
    store = MemorySecrets()
    store.put("kube-system/jfs", name="datasets")
    answers: list[Usage | errors.LensError] = [
        {"datasets": VolumeUsage(capacity_bytes=10, used_bytes=5)},
        errors.SourceError("query API: connection refused"),
        errors.SourceError("query API: connection refused"),
    ]

    def read_usage() -> Usage:
        answer = answers.pop(0)
        if isinstance(answer, errors.LensError):
            raise answer
        return answer

    scan = _scan(db, store, CLASSES, read_usage)
    assert scan.run().usage_read is True
    with caplog.at_level(logging.WARNING, logger="lens.storage.scanning"):
        assert scan.run().usage_read is False
        assert scan.run().written == 0
    assert len(caplog.records) == 1
    datasets = _by_name()["datasets"]
    assert (datasets.capacity_bytes, datasets.used_bytes, datasets.used_inodes) == (10, 5, None)
    assert _by_name()["weka"].capacity_bytes is None
    weka_only = _scan(db, store, [_class("weka", "csi.weka.io")], read_usage)
    assert weka_only.run().usage_read is None, "no JuiceFS volume: no query"
