"""What Grafana's dashboards would query, made for real: `lens demo` (the small preset: a
simulated cluster, its controller, jobs and API in one process, each node's own agent streaming
container events and GPU-minutes to the jobs), a real node agent with an ops port on each
simulated node's host tree, and two real Prometheus servers (Debian's /usr/bin/prometheus): one
scraping the agents and the demo's /metrics and remote-writing everything to the jobs' intake,
which adds the workload labels and forwards to the other, the store the dashboards query — the
deployment docs/telemetry.md describes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from lens.roles.demo.agents import agent_config
from lens.runtime.config import (
    ApiConfig,
    Config,
    ContainersConfig,
    EventsConfig,
    JobsConfig,
    ServerConfig,
    ServiceConfig,
    TelemetryConfig,
)
from lens.sim.scenario.living import SimulatedHost
from tests.agentprocess import AgentProcess
from tests.prometheusserver import PrivatePrometheus
from tests.roles.demo.running import RunningDemo

LOOPBACK = "127.0.0.1"
# The cluster lives 20 times as fast: minutes of GPU reports, idle windows and consumer figures
# come in seconds.
SPEED = 20.0
AGENT_COLLECTORS = ("amdgpu", "dri", "rdma", "kubelet", "ephemeral_storage")


def demo_config(write_url: str) -> Config:
    """Lens's defaults on free loopback ports, the jobs forwarding remote write to `write_url`,
    and two departures so that every dashboard has something to show within a minute: the team
    is read from the workloads' `app` label (a team per workload: more rows for the team panels
    than the scenario's two teams); and every held GPU under 100 % counts as idle after a minute
    (the dashboards are under test here, not idleness)."""
    return Config(
        server=ServerConfig(host=LOOPBACK, port=0),
        service=ServiceConfig(loop_jitter_ratio=0),
        api=ApiConfig(host=LOOPBACK, port=0),
        jobs=JobsConfig(
            team_label="app",
            idle_utilization_floor=1.0,
            idle_window_minutes=1,
            idle_interval_seconds=10,
        ),
        telemetry=TelemetryConfig(remote_write_url=write_url),
    )


class Agent(AgentProcess):
    """A node agent on a simulated node of the demo, as `lens node-agent` runs there: its host
    tree, its kubelet, its own ops port; no container tracking or event stream (the demo's own
    agent for the node streams those)."""

    def __init__(self, demo: RunningDemo, host: SimulatedHost) -> None:
        base = agent_config(demo.config, host, jobs_address="", speed=1.0)
        config = dataclasses.replace(
            base,
            server=ServerConfig(host=LOOPBACK, port=0),
            node_agent=dataclasses.replace(
                base.node_agent,
                collectors=AGENT_COLLECTORS,
                gpu_interval_seconds=1.0,
                kubelet_interval_seconds=2.0,
                collector_timeout_seconds=1.0,
            ),
            containers=ContainersConfig(
                containerd_address="", docker_address="", pod_resources_socket=""
            ),
            events=EventsConfig(server_address=""),
        )
        self.node = host.name
        super().__init__(config, name=f"node-agent {host.name}")


class Prometheus(PrivatePrometheus):
    """The shared test Prometheus, answering Grafana's kinds of questions too."""

    def _get(self, path: str, params: list[tuple[str, str]]) -> Any:
        address = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(address, timeout=10) as answer:
                document = json.load(answer)
        except urllib.error.HTTPError as exc:  # 400 and 422 carry the reason
            document = json.load(exc)
        assert document["status"] == "success", (params, document)
        return document["data"]

    def query(self, promql: str) -> list[dict[str, Any]]:
        """The result of evaluating `promql` now (/api/v1/query): the samples of a vector, or a
        scalar as one sample."""
        data = self._get("/api/v1/query", [("query", promql)])
        if data["resultType"] == "scalar":
            return [{"metric": {}, "value": data["result"]}]
        result: list[dict[str, Any]] = data["result"]
        return result

    def label_values(self, label: str, selector: str) -> list[str]:
        """The values `label` takes in the series `selector` matches (Grafana's label_values)."""
        values: list[str] = self._get(f"/api/v1/label/{label}/values", [("match[]", selector)])
        return sorted(values)


def store_config() -> dict[str, Any]:
    """The store Lens forwards to: it scrapes nothing, it only receives."""
    return {"global": {"scrape_interval": "1s"}}


def scraping_config(agents: list[Agent], jobs: str, write_url: str) -> dict[str, Any]:
    """Each agent's target carries its node's name as `node`, as relabelling
    __meta_kubernetes_pod_node_name does for a DaemonSet's pods (the dashboards and the
    enrichment need it), and no `pod` or `namespace`; the jobs' series keep their own labels
    (deploy/grafana/README.md says why)."""
    agent_targets = [{"targets": [a.address], "labels": {"node": a.node}} for a in agents]
    return {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
        "scrape_configs": [
            {"job_name": "lens-node-agent", "static_configs": agent_targets},
            {
                "job_name": "lens-jobs",
                "honor_labels": True,
                "static_configs": [{"targets": [jobs]}],
            },
        ],
        "remote_write": [
            {
                "url": write_url,
                "queue_config": {
                    "batch_send_deadline": "500ms",
                    "min_backoff": "100ms",
                    "max_backoff": "1s",
                },
            }
        ],
    }


@contextlib.contextmanager
def running_lab(directory: Path, ports: list[int]) -> Any:
    """The whole chain, started; yields the store Prometheus the dashboards query."""
    store_port, scraper_port = ports
    with contextlib.ExitStack() as stack:
        store = Prometheus(
            directory / "store",
            port=store_port,
            config=store_config(),
            flags=("--web.enable-remote-write-receiver",),
        )
        stack.callback(store.stop)
        demo = RunningDemo(
            directory / "demo",
            speed=SPEED,
            base=demo_config(f"{store.url}/api/v1/write"),
            rdma_ports=True,  # the lab's own agents read them for the RDMA panels
        )
        stack.callback(demo.stop)
        assert demo.agents.started.wait(60), "the demo's nodes did not start"
        agents = []
        for host in demo.cluster.hosts.values():
            agents.append(Agent(demo, host))
            stack.callback(agents[-1].stop)
        scraper = Prometheus(
            directory / "scraper",
            port=scraper_port,
            config=scraping_config(agents, demo.address, f"http://{demo.address}/api/v1/write"),
        )
        stack.callback(scraper.stop)
        yield store, scraper
