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
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from lens.roles.demo import main as demo_main
from lens.roles.demo.agents import SimulatedAgents, agent_config
from lens.roles.node_agent import main as agent_main
from lens.runtime import launcher
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
from lens.runtime.process import Process
from lens.sim.scenario.living import LivingCluster, SimulatedHost

LOOPBACK = "127.0.0.1"
# The cluster lives 20 times as fast: minutes of GPU reports, idle windows and consumer figures
# come in seconds.
SPEED = 20.0
AGENT_COLLECTORS = ("amdgpu", "dri", "rdma", "kubelet", "ephemeral_storage")


def demo_config(write_url: str) -> Config:
    """Lens's defaults on free loopback ports, the jobs forwarding remote write to `write_url`,
    and two departures so that every dashboard has something to show within a minute: the
    simulated workloads carry no team label, so their `app` label stands for the team; and every
    held GPU under 100 % counts as idle after a minute (the dashboards are under test here, not
    idleness)."""
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


class Demo:
    """`lens demo --preset small --speed 20` in this process, on a thread."""

    def __init__(self, directory: Path, config: Config) -> None:
        planned = demo_main.plan(config, preset="small", speed=SPEED, directory=directory)
        self.config = planned.config
        self.process = Process(
            "demo",
            server=planned.config.server,
            service=planned.config.service,
            clock=demo_main.clock(SPEED),
            handle_signals=False,
        )
        built = launcher.assemble(planned.config, planned.roles, process=self.process)
        cluster, agents = built[0], built[3]
        assert isinstance(cluster, LivingCluster) and isinstance(agents, SimulatedAgents)
        self.cluster, self.agents = cluster, agents
        self._thread = threading.Thread(target=self.process.run, name="demo", daemon=True)
        self._thread.start()
        assert self.process.service.started.wait(60), self.process.failed()

    @property
    def address(self) -> str:
        """The ops port: /metrics of the jobs, controller and API; the remote-write intake."""
        return f"{LOOPBACK}:{self.process.http.port}"

    def stop(self) -> None:
        self.process.service.request_stop("test over")
        self._thread.join(60)
        assert not self._thread.is_alive()
        assert self.process.failed() is None


class Agent:
    """A node agent on a simulated node of the demo, as `lens node-agent` runs there: its host
    tree, its kubelet, its own ops port; no container tracking or event stream (the demo's own
    agent for the node streams those)."""

    def __init__(self, demo: Demo, host: SimulatedHost) -> None:
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
        self.process = Process(
            f"node-agent {host.name}",
            server=config.server,
            service=config.service,
            handle_signals=False,
        )
        self.agent = agent_main.build(config, self.process)
        self._codes: list[int] = []
        self._thread = threading.Thread(
            target=lambda: self._codes.append(self.process.service.run()), daemon=True
        )
        self._thread.start()
        assert self.process.service.started.wait(15)

    @property
    def address(self) -> str:
        return f"{LOOPBACK}:{self.process.http.port}"

    def stop(self) -> None:
        self.process.service.request_stop("test over")
        self._thread.join(15)
        self.agent.cycle.close()
        assert self._codes == [0]


class Prometheus:
    """/usr/bin/prometheus on a free port with its TSDB and log under `directory`."""

    def __init__(
        self, directory: Path, *, port: int, config: dict[str, Any], flags: tuple[str, ...] = ()
    ) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.url = f"http://{LOOPBACK}:{port}"
        (directory / "prometheus.yml").write_text(json.dumps(config, indent=1))  # JSON is YAML
        self._log = (directory / "prometheus.log").open("wb")
        self._process = subprocess.Popen(
            [
                "/usr/bin/prometheus",
                f"--config.file={directory / 'prometheus.yml'}",
                f"--storage.tsdb.path={directory / 'data'}",
                f"--web.listen-address={LOOPBACK}:{port}",
                "--log.level=warn",
                *flags,
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def ready(self) -> bool:
        assert self._process.poll() is None, "prometheus exited; see prometheus.log"
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as answer:
                return bool(answer.status == 200)
        except (urllib.error.URLError, ConnectionError):
            return False

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

    def stop(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(15)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(5)
        self._log.close()


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
        demo = Demo(directory / "demo", demo_config(f"{store.url}/api/v1/write"))
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
