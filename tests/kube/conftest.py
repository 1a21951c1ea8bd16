"""Fixtures: an API emulator (with a typed client), the small scenario played on one with a
FakeClock (and ClusterSyncs over it), and the simulated kubelet of node gpu-node-1."""

from __future__ import annotations

import datetime
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes
import peewee
import pytest

from lens.kube.machinery.reflector import WatchSettings
from lens.kube.workloads.clustersync import ClusterSync
from lens.kube.workloads.syncmetrics import SyncMetrics
from lens.runtime.clock import FakeClock
from lens.runtime.config import ControllerConfig, KubeletConfig
from lens.runtime.selfmetrics import SelfMetrics
from lens.sim.kube.server import KubeApiServer
from lens.sim.kubelet.devices import Device
from lens.sim.kubelet.server import KubeletServer
from lens.sim.scenario import spec
from lens.sim.scenario.player import ScenarioPlayer


@dataclass
class Kubelet:
    kube: KubeApiServer
    server: KubeletServer
    token_file: Path
    config: KubeletConfig

    def add_pod(self, name: str, spec: dict[str, object], phase: str = "Running") -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": "gpu-node-1", **spec},
            "status": {"phase": phase},
        }
        self.kube.create(body)


@pytest.fixture
def kubelet(tmp_path: Path) -> Iterator[Kubelet]:
    clock = FakeClock(start_time=1_800_000_000.0)
    kube = KubeApiServer(clock=clock).start()
    inventory = {"amd.com/gpu": [Device(f"0000:{i:02x}:00.0", 0) for i in range(8)]}
    server = KubeletServer(
        kube.store, "gpu-node-1", directory=tmp_path / "kubelet", inventory=inventory, clock=clock
    ).start()
    token_file = tmp_path / "token"
    token_file.write_text("sim-kubelet-token\n")
    config = KubeletConfig(
        url=server.url,
        token_file=str(token_file),
        ca_file=str(server.cert.ca_file),
        timeout_seconds=2.0,
    )
    yield Kubelet(kube, server, token_file, config)
    server.stop()
    kube.stop()


@pytest.fixture
def core(api_client: kubernetes.client.ApiClient) -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(api_client)


WATCH = WatchSettings(stall_seconds=10.0, watch_timeout_seconds=30)


class Played:
    def __init__(self, db: peewee.Database) -> None:
        self.clock = FakeClock(start_time=1_800_000_000.0)
        self.kube = KubeApiServer(
            clock=self.clock, bookmark_interval=0.2, history_size=10_000, rng=random.Random(3)
        )
        self.kube.start()
        self.player = ScenarioPlayer(spec.small(), self.kube, clock=self.clock).load()
        configuration = kubernetes.client.Configuration()
        configuration.host = self.kube.url
        self.api = kubernetes.client.ApiClient(configuration)
        self.db = db
        self.syncs: list[ClusterSync] = []
        self.metrics = SelfMetrics(process=False)
        self.sync_metrics = SyncMetrics(self.metrics)

    def wall_time(self) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self.clock.time(), datetime.UTC)

    def sync(self, *, watch: WatchSettings = WATCH, **config: Any) -> ClusterSync:
        sync = ClusterSync(
            self.api,
            self.db,
            cluster="c1",
            config=ControllerConfig(**config),
            watch=watch,
            metrics=self.sync_metrics,
            wall_time=self.wall_time,
        )
        sync.start()
        self.syncs.append(sync)
        return sync

    def close(self) -> None:
        for sync in self.syncs:
            sync.stop()
        self.api.close()
        self.kube.stop()


@pytest.fixture
def played(db: peewee.Database) -> Iterator[Played]:
    played = Played(db)
    yield played
    played.close()
