"""`lens demo` in the test's process: the plan the command runs, built by the launcher's own
assembly into a process run on a thread (no signal handlers), on free loopback ports."""

from __future__ import annotations

import json
import threading
import urllib.request
from pathlib import Path

from lens.roles.api.main import Api
from lens.roles.demo import main as demo_main
from lens.roles.demo.agents import SimulatedAgents
from lens.runtime import launcher
from lens.runtime.config import ApiConfig, Config, ServerConfig, ServiceConfig
from lens.runtime.process import Process
from lens.sim.scenario.living import LivingCluster

LOOPBACK = "127.0.0.1"


def config() -> Config:
    """Lens's defaults, every port a free one on loopback."""
    return Config(
        server=ServerConfig(host=LOOPBACK, port=0),
        service=ServiceConfig(loop_jitter_ratio=0),
        api=ApiConfig(host=LOOPBACK, port=0),
    )


class RunningDemo:
    """A demo of `preset` at `speed` under `directory` on `base` (default: config()), its
    nodes with RDMA ports when `rdma_ports`, started; `stop()` ends it."""

    def __init__(
        self,
        directory: Path,
        *,
        preset: str = "small",
        speed: float = 1.0,
        base: Config | None = None,
        rdma_ports: bool = False,
    ) -> None:
        planned = demo_main.plan(
            base or config(),
            preset=preset,
            speed=speed,
            directory=directory,
            rdma_ports=rdma_ports,
        )
        self.config = planned.config
        self.process = Process(
            "demo",
            server=planned.config.server,
            service=planned.config.service,
            clock=demo_main.clock(speed),
            handle_signals=False,
        )
        built = launcher.assemble(planned.config, planned.roles, process=self.process)
        cluster, _jobs, _controller, agents, _logs, api = built
        assert isinstance(cluster, LivingCluster) and isinstance(agents, SimulatedAgents)
        assert isinstance(api, Api)
        self.cluster, self.agents, self.api = cluster, agents, api
        self._thread = threading.Thread(target=self.process.run, name="demo", daemon=True)
        self._thread.start()
        assert self.process.service.started.wait(60), self.process.failed()
        self.url = f"http://{LOOPBACK}:{api.server.port}/"

    @property
    def address(self) -> str:
        """The ops port: /metrics of the jobs, controller and API; the telemetry intake."""
        return f"{LOOPBACK}:{self.process.http.port}"

    def answer(self, path: str) -> object:
        """The `data` of the API's answer to GET `path`."""
        with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=10) as response:
            return json.loads(response.read())["data"]

    def stop(self) -> None:
        self.process.service.request_stop("test over")
        self._thread.join(60)
        assert not self._thread.is_alive()
        assert self.process.failed() is None
