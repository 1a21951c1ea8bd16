"""A real Prometheus (Debian's package) scrapes a node agent on a simulated MI300X node, and the
series it stores hold the values the simulator enacted: what a dashboard would show."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypedDict

import pytest

from lens.runtime.clock import FakeClock
from lens.sim.hosts.tree import HostTree

from .conftest import MakeAgent, Running

pytestmark = pytest.mark.slow_timeout

Vector = dict[str, float]  # one label's value -> the sample's value


class Sample(TypedDict):
    """One element of an instant vector in /api/v1/query's answer."""

    metric: dict[str, str]
    value: tuple[float, str]  # evaluation time, the value as text


class PrivatePrometheus:
    """/usr/bin/prometheus on a free port with its TSDB in a temporary folder."""

    def __init__(self, directory: Path, *, port: int, target: str) -> None:
        self.url = f"http://127.0.0.1:{port}"
        config = directory / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
            "scrape_configs:\n"
            f"  - job_name: lens\n    static_configs: [{{targets: ['{target}']}}]\n"
        )
        self._log = (directory / "prometheus.log").open("wb")
        self._process = subprocess.Popen(
            [
                "/usr/bin/prometheus",
                f"--config.file={config}",
                f"--storage.tsdb.path={directory / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
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

    def query(self, promql: str) -> list[Sample]:
        """The instant vector `promql` evaluates to now (/api/v1/query)."""
        address = f"{self.url}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
        with urllib.request.urlopen(address, timeout=5) as answer:
            document = json.load(answer)
        assert document["status"] == "success", document
        assert document["data"]["resultType"] == "vector"
        result: list[Sample] = document["data"]["result"]
        return result

    def values(self, promql: str, *, by: str) -> Vector:
        """{value of label `by`: sample value} of the vector `promql` evaluates to."""
        return {sample["metric"][by]: float(sample["value"][1]) for sample in self.query(promql)}

    def stop(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(15)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(5)
        self._log.close()


@pytest.fixture
def scraping(
    tmp_path: Path, free_port: Callable[[], int]
) -> Iterator[Callable[[int], PrivatePrometheus]]:
    """scraping(port) -> a started Prometheus scraping 127.0.0.1:port every second."""
    started: list[PrivatePrometheus] = []

    def start(port: int) -> PrivatePrometheus:
        server = PrivatePrometheus(tmp_path, port=free_port(), target=f"127.0.0.1:{port}")
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def test_prometheus_stores_the_simulated_gpu_and_port_readings(
    mi300x: HostTree,
    clock: FakeClock,
    make_agent: MakeAgent,
    start: Callable[..., Running],
    scraping: Callable[[int], PrivatePrometheus],
    eventually: Callable[..., None],
) -> None:
    clock.advance(600)  # ten minutes of load: the energy and traffic counters are well above 0
    mi300x.update()
    agent = make_agent(mi300x, collectors=("amdgpu", "rdma"))
    running = start(agent)
    eventually(lambda: agent.cycle.cycles >= 1, timeout=15)
    prometheus = scraping(agent.process.http.port)
    eventually(prometheus.ready, timeout=30)
    eventually(lambda: len(prometheus.query("lens_ib_port_transmit_bytes_total")) == 8, timeout=30)
    assert prometheus.values('up{job="lens"}', by="job") == {"lens": 1.0}

    node = mi300x.node
    gpus = {gpu.bdf: reading for gpu, reading in zip(node.gpus, node.gpu_readings, strict=True)}
    assert prometheus.values("lens_gpu_utilization_ratio", by="pci_bus_id") == {
        bdf: reading.utilization / 100 for bdf, reading in gpus.items()
    }
    assert prometheus.values("lens_gpu_memory_used_bytes", by="pci_bus_id") == {
        bdf: float(reading.vram_used_bytes) for bdf, reading in gpus.items()
    }
    # hwmon counts power in microwatts: the simulator's watts are there to 1e-6.
    power = prometheus.values("lens_gpu_power_watts", by="pci_bus_id")
    assert power == {bdf: pytest.approx(r.power_w, abs=1e-6) for bdf, r in gpus.items()}
    # The original exporter's name, in percent, as its dashboards expect.
    assert prometheus.values("gpu_utilization", by="gpu_id") == {
        str(index): reading.utilization for index, reading in enumerate(gpus.values())
    }

    ports = {nic.name: port for nic, port in zip(node.nics, node.port_readings, strict=True)}
    # The kernel's PMA counter counts 4-byte words; Lens exports bytes.
    assert prometheus.values("lens_ib_port_transmit_bytes_total", by="device") == {
        name: float(port.xmit_bytes // 4 * 4) for name, port in ports.items()
    }
    assert prometheus.values("rdma_stat_rx_write_requests", by="device") == {
        name: float(port.hw_counters["rx_write_requests"]) for name, port in ports.items()
    }
    assert all(port.xmit_bytes > 0 for port in ports.values()), "the traffic is not all zeros"
    assert running.get("/healthz")[0] == 200
