"""`lens controller` as a whole: two replicas elect one leader that writes the scenario's pods
and workloads and says it is watching; when it stops, the other takes over within a lease
period and carries on."""

from __future__ import annotations

import datetime
import threading
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lens.roles.controller import main as controller_main
from lens.runtime.clock import SystemClock
from lens.runtime.config import Config, ControllerConfig, DatabaseConfig, KubeConfig, ServerConfig
from lens.runtime.process import Process
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests, spec
from lens.sim.scenario.player import ScenarioPlayer
from lens.store import database, freshness, models
from tests.databases import share_database

pytestmark = pytest.mark.slow_timeout

LEASE_SECONDS = 2.0


def _process(config: Config) -> Process:
    return Process("controller", server=config.server, service=config.service, handle_signals=False)


class Running:
    def __init__(self, controller: controller_main.Controller) -> None:
        self.controller = controller
        self._thread = threading.Thread(target=controller.process.service.run, daemon=True)
        self._thread.start()
        assert controller.process.service.started.wait(10)

    @property
    def leading(self) -> bool:
        return self.controller.fleet.leading

    def ready(self) -> int:
        return self.readiness()[0]

    def readiness(self) -> tuple[int, str]:
        port = self.controller.process.http.port
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
                return int(answer.status), answer.read().decode()
        except urllib.error.HTTPError as exc:
            return int(exc.code), exc.read().decode()

    def stop(self) -> None:
        if self._thread.is_alive():
            self.controller.process.service.request_stop("test over")
            self._thread.join(20)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[KubeApiServer, Path]]:
    kube = KubeApiServer(bookmark_interval=0.5, history_size=10_000).start()
    kube.create(manifests.namespace("lens"))
    yield kube, kube.write_kubeconfig(tmp_path / "kubeconfig")
    kube.stop()


@pytest.fixture
def start(
    cluster: tuple[KubeApiServer, Path], empty_database_url: str
) -> Iterator[Callable[[str], Running]]:
    started: list[Running] = []

    def make(identity: str, lease: str = "lens/lens-controller") -> Running:
        config = Config(
            database=DatabaseConfig(url=empty_database_url),
            server=ServerConfig(host="127.0.0.1", port=0),
            kube=KubeConfig(source="kubeconfig", kubeconfig=str(cluster[1]), stall_seconds=10),
            controller=ControllerConfig(
                identity=identity,
                lease=lease,
                lease_duration_seconds=LEASE_SECONDS,
                kubelet_service_interval_seconds=1,
            ),
        )
        process = _process(config)
        if started:  # one Database for the replicas of this interpreter (tests/databases.py)
            share_database(process, empty_database_url, started[0].controller.db)
        running = Running(controller_main.build(config, process))
        started.append(running)
        return running

    yield make
    for running in started:
        running.stop()


StartController = Callable[..., Running]


def _workload_names(db_url: str) -> set[str]:
    return {w.name for w in models.GpuWorkload.select()}


def test_one_leader_writes_and_a_follower_takes_over(
    cluster: tuple[KubeApiServer, Path],
    start: Callable[[str], Running],
    eventually: Callable[..., None],
) -> None:
    kube, _ = cluster
    player = ScenarioPlayer(spec.small(), kube, clock=SystemClock()).load()
    first = start("replica-a")
    eventually(lambda: first.leading, timeout=10)
    second = start("replica-b")
    db = first.controller.db
    with database.session(db):
        eventually(
            lambda: "llama-pretrain" in {w.name for w in models.GpuWorkload.select()}, timeout=20
        )
    eventually(lambda: first.ready() == 200, timeout=15)
    eventually(lambda: second.ready() == 200, timeout=15)  # a follower is ready: it stands by
    assert not second.leading
    # The leader's heartbeat says the pods' figures are current; a follower's says nothing.
    now = datetime.datetime(2026, 12, 1, tzinfo=datetime.UTC)
    before = freshness.read(db, cluster="default", figures=[freshness.PODS])
    controller_main.record_watching(second.controller.fleet, db, now)
    assert freshness.read(db, cluster="default", figures=[freshness.PODS]) == before
    eventually(lambda: all(s.watching() for s in first.controller.fleet.syncs()), timeout=10)
    controller_main.record_watching(first.controller.fleet, db, now)
    watched = freshness.read(db, cluster="default", figures=[freshness.PODS])
    assert watched[freshness.PODS].as_of == now
    first.stop()
    # Within a lease's length on a quiet machine; the wait is longer so that a loaded one does
    # not fail the test (how soon is tests/kube/machinery/test_leader.py's).
    eventually(lambda: second.leading, timeout=LEASE_SECONDS * 10)
    job = kube.resource("batch/v1", "Job")
    kube.create(manifests.controller("Job", "batch/v1", "after-handover", "ml", {"template": {}}))
    # the follower-turned-leader writes what happens from now on
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "after-handover-0",
            "namespace": "ml",
            "ownerReferences": [manifests.owner(kube.store.get(job, "ml", "after-handover"))],
        },
        "spec": {
            "nodeName": player.scenario.node_names[0],
            **manifests.pod_template("after", gpus=1, resource="amd.com/gpu")["spec"],
        },
        "status": {"phase": "Running"},
    }
    kube.create(pod)
    with database.session(second.controller.db):
        eventually(
            lambda: "after-handover" in {w.name for w in models.GpuWorkload.select()}, timeout=20
        )


def test_the_leader_lists_every_node_for_prometheus(
    cluster: tuple[KubeApiServer, Path],
    start: Callable[[str], Running],
    eventually: Callable[..., None],
) -> None:
    kube, _ = cluster
    ScenarioPlayer(spec.small(), kube, clock=SystemClock()).load()
    running = start("replica-a")
    slices = kube.resource("discovery.k8s.io/v1", "EndpointSlice")

    def listed() -> list[str]:
        try:
            found = kube.store.get(slices, "kube-system", "lens-kubelet-ipv4-0")
        except Exception:  # not written yet
            return []
        return [e["nodeName"] for e in found["endpoints"]]

    eventually(lambda: listed() == ["gpu-node-0000", "gpu-node-0001"], timeout=15)
    kube.create(manifests.node("gpu-node-0002", model="MI300X", gpus=8, address="192.168.0.9"))
    eventually(lambda: len(listed()) == 3, timeout=15)
    assert running.leading


def test_clusters_named_in_the_secret_are_stored_under_their_names(
    cluster: tuple[KubeApiServer, Path],
    empty_database_url: str,
    tmp_path: Path,
    eventually: Callable[..., None],
) -> None:
    import base64

    home, kubeconfig = cluster
    ScenarioPlayer(spec.small(), home, clock=SystemClock()).load()
    with KubeApiServer(bookmark_interval=0.5) as east:
        ScenarioPlayer(spec.small(), east, clock=SystemClock()).load()
        text = east.write_kubeconfig(tmp_path / "east").read_text()
        home.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "clusters", "namespace": "lens"},
                "data": {"east": base64.b64encode(text.encode()).decode()},
            }
        )
        config = Config(
            database=DatabaseConfig(url=empty_database_url),
            server=ServerConfig(host="127.0.0.1", port=0),
            kube=KubeConfig(source="kubeconfig", kubeconfig=str(kubeconfig), stall_seconds=10),
            controller=ControllerConfig(
                leader_election=False,
                kubelet_service="",
                clusters_secret="lens/clusters",
                clusters_refresh_seconds=1,
            ),
        )
        running = Running(controller_main.build(config, _process(config)))
        try:
            db = running.controller.db

            def clusters() -> set[str]:
                with database.session(db):
                    return {
                        w.cluster for w in models.GpuWorkload.select(models.GpuWorkload.cluster)
                    }

            eventually(lambda: clusters() == {"default", "east"}, timeout=20)
            with database.session(db):
                per_cluster = {
                    name: models.GpuPod.select().where(models.GpuPod.cluster == name).count()
                    for name in ("default", "east")
                }
            assert per_cluster["default"] > 0 and per_cluster["east"] > 0
        finally:
            running.stop()


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_a_lease_in_a_missing_namespace_is_named_in_readyz_until_it_exists(
    cluster: tuple[KubeApiServer, Path],
    start: StartController,
    eventually: Callable[..., None],
) -> None:
    kube, _ = cluster
    running = start("replica-a", lease="lens-system/lens-controller")

    def names_the_namespace() -> bool:
        status, body = running.readiness()
        return status == 503 and "kubectl create namespace lens-system" in body

    eventually(names_the_namespace, timeout=10)
    assert not running.leading
    kube.create(manifests.namespace("lens-system"))
    eventually(lambda: running.leading, timeout=10)
    eventually(lambda: "lens-system" not in running.readiness()[1], timeout=10)
