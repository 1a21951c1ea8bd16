"""A real Prometheus (Debian's package) scrapes a node agent on a simulated MI300X node, and the
series it stores hold the values the simulator enacted: what a dashboard would show."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lens.runtime.clock import FakeClock
from lens.sim.hosts.tree import HostTree
from tests.prometheusserver import PrivatePrometheus

from .conftest import MakeAgent, Running

pytestmark = pytest.mark.slow_timeout


@pytest.fixture
def scraping(
    tmp_path: Path, free_port: Callable[[], int]
) -> Iterator[Callable[[int], PrivatePrometheus]]:
    """scraping(port) -> a started Prometheus scraping 127.0.0.1:port every second."""
    started: list[PrivatePrometheus] = []

    def start(port: int) -> PrivatePrometheus:
        config = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [
                {"job_name": "lens", "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
            ],
        }
        server = PrivatePrometheus(tmp_path, port=free_port(), config=config)
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
