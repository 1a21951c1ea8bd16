"""Jobs replicas under one Lease: every one serves events, only the leader runs the periodic
jobs; without a Lease the one replica runs them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import kubernetes
import pytest

from lens.roles.jobs import main as jobs_main
from lens.roles.jobs.main import Jobs
from lens.runtime.config import Config, DatabaseConfig, JobsConfig, ServerConfig
from lens.runtime.process import Process
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests
from tests.databases import new_database, share_database

pytestmark = pytest.mark.slow_timeout


class Replica:
    def __init__(self, jobs: Jobs) -> None:
        self.jobs = jobs
        self.thread = threading.Thread(target=jobs.process.service.run, daemon=True)
        self.thread.start()
        assert jobs.process.service.started.wait(10)

    def leader_gauge(self) -> float | None:
        return self.jobs.process.metrics.registry.get_sample_value("lens_jobs_leader")

    def rollups(self) -> int:
        return self.jobs.process.loops.runs("report-rollup")

    def stop(self) -> None:
        self.jobs.process.service.request_stop("test over")
        self.thread.join(15)


@pytest.fixture
def replicas(
    tmp_path: Path, apiserver: KubeApiServer, api_client: kubernetes.client.ApiClient
) -> Iterator[Callable[..., Replica]]:
    apiserver.create(manifests.namespace("lens"))
    started: list[Replica] = []
    with new_database("sqlite", tmp_path) as url:

        def start(identity: str, *, lease: str = "lens/lens-jobs") -> Replica:
            config = Config(
                database=DatabaseConfig(url=url),
                server=ServerConfig(host="127.0.0.1", port=0),
                jobs=JobsConfig(
                    grpc_host="127.0.0.1",
                    grpc_port=0,
                    lease=lease,
                    lease_duration_seconds=1.5,
                    identity=identity,
                    reports_rollup_interval_seconds=1.0,
                    daily_report_time="",
                ),
            )
            process = Process(
                "jobs", server=config.server, service=config.service, handle_signals=False
            )
            if started:  # one Database for the replicas of this interpreter (tests/databases.py)
                share_database(process, url, started[0].jobs.db)
            replica = Replica(jobs_main.build(config, process, api=api_client))
            started.append(replica)
            return replica

        yield start
        for replica in started:
            replica.stop()


def test_only_the_leader_runs_the_periodic_jobs_and_a_follower_takes_over(
    replicas: Callable[..., Replica], eventually: Callable[..., None]
) -> None:
    first = replicas("jobs-a")
    eventually(lambda: first.leader_gauge() == 1.0, timeout=5)
    second = replicas("jobs-b")
    eventually(lambda: first.rollups() >= 2, timeout=10)
    assert second.leader_gauge() == 0.0 and second.rollups() == 0
    assert second.jobs.grpc.port > 0  # it serves events all the same
    first.stop()
    eventually(lambda: second.leader_gauge() == 1.0, timeout=5)
    eventually(lambda: second.rollups() >= 1, timeout=10)


def test_without_a_lease_the_one_replica_runs_them(
    replicas: Callable[..., Replica], eventually: Callable[..., None]
) -> None:
    alone = replicas("jobs-a", lease="")
    assert alone.leader_gauge() == 1.0
    eventually(lambda: alone.rollups() >= 1, timeout=10)
