"""`lens jobs` against two API emulators, recorded: the jobs Lease, the watch caches of nodes
and pods, the storage scan (a JuiceFS class whose Secret is in kube-system, an NFS class) and the
multi-cluster storage config (the aggregate created, then patched when a cluster's changed)."""

from __future__ import annotations

import json
from pathlib import Path

from lens.roles.jobs import main as jobs_main
from lens.runtime.config import Config, ControllerConfig, JobsConfig
from lens.sim.kube.server import KubeApiServer
from lens.sim.kube.status import ApiError
from lens.sim.scenario import manifests
from tests.deploy.roleruns import (
    LOOPBACK,
    Recorded,
    Running,
    Settings,
    database_of,
    emulator,
    ensure_namespace,
    kubeconfig_of,
    process_of,
    put_secret,
    split,
    wait_for,
)

JUICEFS_SECRET = "kube-system/jfs-secret"  # where juicefs-csi's examples keep it


def _config(settings: Settings, home: KubeApiServer, directory: Path) -> Config:
    return Config(
        database=database_of(directory, "jobs"),
        server=LOOPBACK,
        kube=kubeconfig_of(home, directory, "home"),
        jobs=JobsConfig(
            grpc_host="127.0.0.1",
            grpc_port=0,
            lease=settings.jobs_lease,
            lease_duration_seconds=2.0,
            identity="lens-jobs-0",
            watch_cluster="on",
            daily_report_time="",
            storage_config_secret=settings.storage_config_secret,
            multi_storage_config_secret=settings.multi_storage_config_secret,
            storage_scan_interval_seconds=5.0,
            multi_storage_interval_seconds=5.0,
        ),
        controller=ControllerConfig(clusters_secret=settings.clusters_secret),
    )


def _storage_class(name: str, provisioner: str, parameters: dict[str, str]) -> dict[str, object]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "parameters": parameters,
    }


def _cluster(home: KubeApiServer, east: KubeApiServer, settings: Settings, directory: Path) -> None:
    for kube in (home, east):
        ensure_namespace(kube, settings.namespace)
        put_secret(kube, settings.storage_config_secret, {"postgres": json.dumps({"port": 5432})})
    home.create(manifests.node("gpu-node-0000", model="MI300X", gpus=8, address="192.168.0.1"))
    put_secret(home, JUICEFS_SECRET, {"name": "datasets", "metaurl": "redis://redis:6379/1"})
    namespace, name = split(JUICEFS_SECRET)
    secret_ref = {
        "csi.storage.k8s.io/provisioner-secret-name": name,
        "csi.storage.k8s.io/provisioner-secret-namespace": namespace,
    }
    home.create(_storage_class("jfs", "csi.juicefs.com", secret_ref))
    home.create(_storage_class("nfs", "nfs.csi.k8s.io", {"server": "nfs.lan", "share": "/x"}))
    east_kubeconfig = east.write_kubeconfig(directory / "east.kubeconfig", context="east")
    put_secret(home, settings.clusters_secret, {"east": east_kubeconfig.read_text()})


def _aggregate(home: KubeApiServer, settings: Settings) -> dict[str, str]:
    namespace, name = split(settings.multi_storage_config_secret)
    try:
        secret = home.store.get(home.resource("v1", "Secret"), namespace, name)
    except ApiError:  # not written yet
        return {}
    return dict(secret.get("data") or {})


def run(settings: Settings, directory: Path) -> Recorded:
    with emulator() as home, emulator() as east:
        _cluster(home, east, settings, directory)
        home.clear_recorded()
        east.clear_recorded()
        built = jobs_main.build(_config(settings, home, directory), process_of("jobs"))
        running = Running(built.process)
        try:
            wait_for("the aggregate written", lambda: "east" in _aggregate(home, settings))
            first = _aggregate(home, settings)
            put_secret(east, settings.storage_config_secret, {"postgres": '{"port": 5433}'})
            wait_for("the aggregate patched", lambda: _aggregate(home, settings) != first)
            wait_for("a storage scan", lambda: built.process.loops.runs("storage-scan") >= 1)
        finally:
            running.stop()  # hands the Lease back
        return Recorded(home=home.recorded(), remote=east.recorded())
