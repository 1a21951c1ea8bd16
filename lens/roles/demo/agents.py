"""The node agents of `lens demo`'s simulated nodes: the real node agent (lens.roles.node_agent)
for each node, in a process of its own within this one — its own metrics, loops and ops port on
loopback — reading that node's host tree, kubelet and Docker stand-in (lens/sim/scenario/
living.py) and streaming container events and GPU-minutes to the jobs' event server.

`SimulatedAgents` is the demo's part: it builds the agents once the cluster is loaded and the
event server listens, runs each on a thread and stops them all at once.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import threading
from collections.abc import Callable

from lens.roles.node_agent import main as agent_main
from lens.runtime import lifecycle
from lens.runtime.clock import Clock
from lens.runtime.config import (
    Config,
    ContainersConfig,
    EventsConfig,
    HostConfig,
    KubeletConfig,
    NodeAgentConfig,
    ServerConfig,
)
from lens.runtime.process import Process
from lens.sim.scenario.living import LivingCluster, SimulatedHost

LOOPBACK = "127.0.0.1"
# Of the cluster's time. A real agent reads its GPUs every second; here a hundred agents share
# the demo's cores (and --speed multiplies their work), and the simulated loads change only at
# whole minutes: four readings a minute give each minute's mean as well as sixty.
GPU_INTERVAL_SECONDS = 15.0
KUBELET_INTERVAL_SECONDS = 60.0
START_SECONDS = 60.0  # of real time, for every agent to start
COLLECTOR_TIMEOUT_MAX = 600.0  # the setting's largest
STOP_WORKERS = 32  # agents stopped at once (each waits a little for its threads)


def agent_config(config: Config, host: SimulatedHost, *, jobs_address: str, speed: float) -> Config:
    """The config of `host`'s agent: the demo's, pointed at that node's simulated parts.
    Its collectors' time limit is the usual one in real time (the cluster's clock runs `speed`
    times as fast)."""
    kubelet = host.kubelet
    timeout = min(COLLECTOR_TIMEOUT_MAX, config.node_agent.collector_timeout_seconds * speed)
    return dataclasses.replace(
        config,
        host=HostConfig(root=str(host.tree.root)),
        server=ServerConfig(host=LOOPBACK, port=0),
        kubelet=KubeletConfig(
            url=kubelet.url,
            token_file=str(host.kubelet_token_file),
            ca_file=str(kubelet.cert.ca_file),
        ),
        node_agent=NodeAgentConfig(
            node_name=host.name,
            collectors=("amdgpu", "nvidia", "dri", "kubelet", "ephemeral_storage"),
            gpu_interval_seconds=GPU_INTERVAL_SECONDS,
            kubelet_interval_seconds=KUBELET_INTERVAL_SECONDS,
            collector_timeout_seconds=timeout,
        ),
        containers=ContainersConfig(
            containerd_address="",
            docker_address=host.docker_socket,
            pod_resources_socket=str(kubelet.socket_path),
        ),
        events=EventsConfig(server_address=jobs_address),
    )


class _Agent:
    """One node's agent process, run on a thread of its own."""

    def __init__(self, config: Config, *, clock: Clock, on_failure: Callable[[str], None]):
        self.process = Process(
            f"node-agent {config.node_agent.node_name}",
            server=config.server,
            service=config.service,
            clock=clock,
            handle_signals=False,
            process_metrics=False,  # the demo's own: a hundred agents would each list its files
        )
        self.agent = agent_main.build(config, self.process)
        self._on_failure = on_failure
        self._thread = threading.Thread(target=self._run, name=self.process.name, daemon=True)

    def _run(self) -> None:
        self.process.run()
        failure = self.process.failed()
        if failure is not None:
            self._on_failure(f"{self.process.name}: {failure}")

    def start(self) -> None:
        self._thread.start()

    def started(self) -> bool:
        return self.process.service.started.wait(START_SECONDS)

    def stop(self) -> None:
        self.process.service.request_stop("lens demo stopping")
        self._thread.join()


class SimulatedAgents:
    """A node agent for every node of `cluster`, started after it and after the jobs."""

    name = "simulated-agents"

    def __init__(
        self,
        config: Config,
        cluster: LivingCluster,
        *,
        clock: Clock,
        speed: float,
        jobs_address: Callable[[], str],
        on_failure: Callable[[BaseException], None],
    ) -> None:
        self._config = config
        self._cluster = cluster
        self._clock = clock
        self._speed = speed
        self._jobs_address = jobs_address
        self._on_failure = on_failure
        self.agents: dict[str, _Agent] = {}

    def _failed(self, what: str) -> None:
        self._on_failure(RuntimeError(what))

    def _start(self) -> None:
        address = self._jobs_address()
        for name, host in self._cluster.hosts.items():
            config = agent_config(self._config, host, jobs_address=address, speed=self._speed)
            self.agents[name] = _Agent(config, clock=self._clock, on_failure=self._failed)
        for agent in self.agents.values():
            agent.start()
        late = [name for name, agent in self.agents.items() if not agent.started()]
        if late:
            raise RuntimeError(f"node agents did not start: {', '.join(late[:5])}")

    async def start(self) -> None:
        await lifecycle.in_thread(self._start, name="simulated-agents-start")

    def _stop(self) -> None:
        agents = list(self.agents.values())
        with concurrent.futures.ThreadPoolExecutor(max_workers=STOP_WORKERS) as pool:
            list(pool.map(_Agent.stop, agents))

    async def stop(self) -> None:
        await lifecycle.in_thread(self._stop, name="simulated-agents-stop")
