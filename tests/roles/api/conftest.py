"""A cluster's rows written by Lens's own writers (nodes: kube/cluster/noderows.py; devices and
their changelog: reports/storing/devices.py; GPU pods: kube/workloads/podrecording.py), and
the API app over them behind FastAPI's TestClient."""

from __future__ import annotations

import datetime
from typing import Any

import peewee
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from lens.kube.cluster.noderows import NodeRow, NodeRows
from lens.kube.machinery.cache import Change, ChangeType
from lens.kube.workloads.gpupods import DEFAULT_GPU_RESOURCES
from lens.kube.workloads.podrecording import GpuPodRecorder
from lens.reports.inventory import DeviceInventory, GpuFacts
from lens.reports.storing.devices import DeviceStore
from lens.roles.api import auth
from lens.roles.api.app import create_app
from lens.roles.api.requestmetrics import RequestMetrics
from lens.roles.api.routers.params import Context
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import database

CLUSTER = "c1"
NOW = datetime.datetime(2026, 11, 21, 5, tzinfo=datetime.UTC)
T0 = NOW.timestamp()
GIB = 2**30


def node(name: str, **columns: object) -> NodeRow:
    """A Ready MI300X node with 8 GPUs, unless `columns` say otherwise."""
    values: dict[str, object] = {
        "name": name,
        "address": "10.0.0.1",
        "gpu_name": "AMD Instinct MI300X",
        "gpu_count": 8,
        "gpu_allocation": 0,
        "gpu_utilization": None,
        "status": "Ready",
        "k8s_status": "Ready",
        "cpu": "AMD EPYC 9654",
        "cpu_count": 192,
        "memory": "2113459300Ki",
        "memory_bytes": 2113459300 * 1024,
        "k8s_version": "v1.30.2",
        "kubelet_version": "v1.30.2",
        "containerd_version": "containerd://1.7.13",
        "os": "Ubuntu 22.04.4 LTS",
        "kernel_version": "5.15.0-101-generic",
        "taints": "[]",
        "driver_version": "6.7.0",
        **columns,
    }
    return NodeRow(**values)  # type: ignore[arg-type]


def write_nodes(db: peewee.Database, *rows: NodeRow, cluster: str = CLUSTER) -> None:
    NodeRows(db, cluster=cluster, wall_time=lambda: NOW).write(rows)


def gpu(index: int, **facts: object) -> GpuFacts:
    values: dict[str, object] = {
        "uuid": f"GPU-{index}",
        "index": index,
        "vendor": "amd",
        "model": "MI300X",
        "serial": f"S{index}",
        "pci_bus_id": f"0000:{index + 0x10:02x}:00.0",
        "vram_bytes": 192 * GIB,
        **facts,
    }
    return GpuFacts(**values)  # type: ignore[arg-type]


def write_gpus(
    db: peewee.Database, node_name: str, gpus: tuple[GpuFacts, ...], *, time: float = T0
) -> None:
    """One inventory of `node_name`'s GPUs, as the event server writes it (in a transaction)."""
    store = DeviceStore(cluster=CLUSTER)
    with database.session(db), db.atomic():
        store.write(node_name, DeviceInventory(time=time, gpus=gpus))


def pod(uid: str, *, node_name: str, gpus: int, phase: str = "Running") -> dict[str, object]:
    """A GPU pod object as the API server lists it: `gpus` in each of two containers when
    `phase` holds two (the original counted such a pod once per container)."""
    return {
        "metadata": {
            "uid": uid,
            "name": f"pod-{uid}",
            "namespace": "ml",
            "resourceVersion": "1",
            "creationTimestamp": "2026-11-21T01:00:00Z",
        },
        "spec": {
            "nodeName": node_name,
            "containers": [
                {"name": "main", "resources": {"limits": {"amd.com/gpu": gpus}}},
                {"name": "side", "resources": {}},
            ],
        },
        "status": {"phase": phase},
    }


def write_pods(db: peewee.Database, *pods: dict[str, object]) -> None:
    recorder = GpuPodRecorder(
        db,
        cluster=CLUSTER,
        resources=DEFAULT_GPU_RESOURCES,
        snapshot_history=1,
        gpu_model=lambda _node: "AMD Instinct MI300X",
        wall_time=lambda: NOW,
    )
    recorder.record([Change(type=ChangeType.ADDED, object=p, old=None) for p in pods])


@pytest.fixture(params=["sqlite", "postgresql"])
def database_engine(request: pytest.FixtureRequest) -> str:
    """The routes are tested on SQLite and PostgreSQL: what they read is tested on every engine,
    MariaDB too, in tests/store/queries."""
    engine: str = request.param
    return engine


def make_app(
    db: peewee.Database,
    *,
    tokens: auth.Authenticator | None = None,
    metrics: RequestMetrics | None = None,
    max_page_size: int = 1000,
    team_label: str = "",
    cors_origins: tuple[str, ...] = ("*",),
    **context_fields: Any,
) -> FastAPI:
    """`lens api`'s app on `db` (cluster CLUSTER); `context_fields`: more of its Context."""
    context = Context(
        db=db,
        cluster=CLUSTER,
        max_page_size=max_page_size,
        team_label=team_label,
        cors_origins=cors_origins,
        **context_fields,
    )
    return create_app(
        context=context,
        metrics=metrics or RequestMetrics(SelfMetrics(process=False)),
        tokens=tokens,
    )


def make_client(db: peewee.Database, **app: Any) -> TestClient:
    """make_app's app behind FastAPI's TestClient (`app`: make_app's keywords)."""
    return TestClient(make_app(db, **app), raise_server_exceptions=False)


@pytest.fixture
def client(db: peewee.Database) -> TestClient:
    """The app on the `db` fixture (each engine), no token asked."""
    return make_client(db)


@pytest.fixture
def sqlite_client(sqlite_db: peewee.Database) -> TestClient:
    return make_client(sqlite_db)


def data(response: object) -> object:
    """The `data` of a 200 answer in the envelope (asserting the envelope)."""
    body = response.json()  # type: ignore[attr-defined]
    assert response.status_code == 200, body  # type: ignore[attr-defined]
    assert body["meta"] == {"code": 2000, "message": "OK"} and body["tracing"] is None
    return body["data"]


def error(response: object, status: int, *, code: int | None = None) -> str:
    """The message of an error answer with `status` (asserting the envelope and its meta code:
    `code`, else the one usual for the status)."""
    body = response.json()  # type: ignore[attr-defined]
    assert response.status_code == status, body  # type: ignore[attr-defined]
    assert body["data"] is None and body["tracing"] is None
    usual = {400: 4001, 401: 4003, 403: 4005, 404: 4004, 503: 5002}.get(status, 5000)
    assert body["meta"]["code"] == (code or usual)
    return str(body["meta"]["message"])
