"""The node agents of `lens demo`'s simulated nodes: the real node agent (lens.roles.node_agent)
for each node, reading that node's host tree, kubelet and Docker stand-in (lens/sim/scenario/
living.py) and streaming container events and GPU-minutes to the jobs' event server.

`SimulatedAgents` is the demo's part: it builds the agents once the cluster is loaded and the
event server listens, and gives the demo's process the loops that run them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import resource
import threading
from collections.abc import Callable, Sequence

from lens.roles.node_agent import main as agent_main
from lens.roles.node_agent.main import NodeAgent
from lens.runtime import errors, lifecycle
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
from lens.runtime.periodic import Loop
from lens.runtime.process import Process
from lens.sim.scenario.living import LivingCluster, SimulatedHost

LOOPBACK = "127.0.0.1"
# Of the cluster's time. A real agent reads its GPUs every second; here a hundred agents share
# the demo's cores (and --speed multiplies their work), and the simulated loads change only at
# whole minutes: four readings a minute give each minute's mean as well as sixty.
GPU_INTERVAL_SECONDS = 15.0
KUBELET_INTERVAL_SECONDS = 60.0
DRI_INTERVAL_SECONDS = 60.0  # a simulated node's DRI devices never change
# The containers listed again to catch what the events missed: the Docker stand-in misses none,
# and a hundred listings cost two seconds of the demo's CPU.
RECONCILE_SECONDS = 300.0
TICK_SECONDS = 5.0  # of the cluster's time: how often the agents' cycles are looked at
COLLECTOR_TIMEOUT_MAX = 600.0  # the setting's largest
LOADED_POLL_SECONDS = 0.1  # while waiting for the simulated hosts
STOP_WORKERS = 32  # agents stopped at once (each waits a little for its threads)
# Descriptors an agent keeps open per GPU it reads (measured: 136 for 8 MI300X). The agents of
# one process share its open-file limit with everything else it opens (the database, a
# hundred kubelets' and Docker stand-ins' sockets): those that would take their kept files past
# a quarter of the limit read each file anew, a few microseconds more per attribute.
KEPT_FILES_PER_GPU = 17
KEPT_SHARE_OF_LIMIT = 4


def kept_files_budget() -> int:
    """How many descriptors the demo's agents may keep open, from the process's soft limit."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 1 << 30 if soft == resource.RLIM_INFINITY else soft // KEPT_SHARE_OF_LIMIT


def files_kept_open(gpus_per_node: Sequence[int], budget: int) -> list[bool]:
    """Whether each node's agent, in start order, keeps its files open within `budget`."""
    kept: list[bool] = []
    for gpus in gpus_per_node:
        wanted = KEPT_FILES_PER_GPU * gpus
        kept.append(wanted <= budget)
        if kept[-1]:
            budget -= wanted
    return kept


def agent_config(
    config: Config,
    host: SimulatedHost,
    *,
    jobs_address: str,
    speed: float,
    keep_files_open: bool = True,
) -> Config:
    """The config of `host`'s agent: the demo's, pointed at that node's simulated parts.
    Its collectors' time limit is the usual one in real time (the cluster's clock runs `speed`
    times as fast)."""
    kubelet = host.kubelet
    timeout = min(COLLECTOR_TIMEOUT_MAX, config.node_agent.collector_timeout_seconds * speed)
    return dataclasses.replace(
        config,
        host=HostConfig(root=str(host.tree.root), keep_files_open=keep_files_open),
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
            dri_interval_seconds=DRI_INTERVAL_SECONDS,
            collector_timeout_seconds=timeout,
        ),
        containers=ContainersConfig(
            reconcile_interval_seconds=RECONCILE_SECONDS,
            containerd_address="",
            docker_address=host.docker_socket,
            pod_resources_socket=str(kubelet.socket_path),
        ),
        events=EventsConfig(server_address=jobs_address),
    )


class SimulatedAgents:
    """A node agent for every node of `cluster`, started after it and after the jobs.

    Each agent is built as `lens node-agent` builds it, into a process of its own (its own
    metrics), but that process is not run: a hundred of them would be a hundred sets of loop
    threads and ops ports fighting over two cores. The demo's own loops run every agent's
    collection cycle and container reconciliation instead, at the agents' cadence."""

    name = "simulated-agents"

    def __init__(
        self,
        config: Config,
        cluster: LivingCluster,
        *,
        clock: Clock,
        speed: float,
        jobs_address: Callable[[], str],
        stopping: threading.Event,
        on_failure: Callable[[BaseException], None],
    ) -> None:
        """`stopping`: set once the loops running the agents are to stop (a pass over a
        hundred agents ends at the agent it is on). `on_failure`: told when an agent cannot
        be built or started."""
        self._config = config
        self._cluster = cluster
        self._clock = clock
        self._speed = speed
        self._jobs_address = jobs_address
        self._on_failure = on_failure
        self._loops_stopping = stopping
        self._lock = threading.Lock()
        self._agents: dict[str, NodeAgent] = {}
        self._stopping = threading.Event()
        self._starter = threading.Thread(target=self._start, name="simulated-agents", daemon=True)
        self.started = threading.Event()  # every agent runs

    @property
    def agents(self) -> list[NodeAgent]:
        """The agents started so far."""
        with self._lock:
            return list(self._agents.values())

    def loops(self) -> tuple[Loop, ...]:
        """The agents' collection cycles (each runs the collectors that are due) and their
        reconciliations with the runtimes, for the demo's process."""
        cycle = Loop(
            name="simulated-agents-collect", interval_seconds=TICK_SECONDS, run=self.collect
        )
        reconcile = Loop(
            name="simulated-agents-containers",
            interval_seconds=RECONCILE_SECONDS,
            run=self.reconcile,
            run_at_start=False,
        )
        return cycle, reconcile

    def collect(self) -> None:
        for agent in self.agents:
            if self._loops_stopping.is_set():
                return
            agent.cycle.run()

    def reconcile(self) -> None:
        for agent in self.agents:
            if self._loops_stopping.is_set():
                return
            if agent.tracking is not None:
                agent.tracking.reconcile()

    def _build(self, host: SimulatedHost, address: str, *, keep_open: bool) -> NodeAgent:
        config = agent_config(
            self._config,
            host,
            jobs_address=address,
            speed=self._speed,
            keep_files_open=keep_open,
        )
        process = Process(
            f"node-agent {host.name}",
            server=config.server,
            service=config.service,
            clock=self._clock,
            handle_signals=False,
            process_metrics=False,  # the demo's own: a hundred agents would each list its files
            publish_metrics=False,  # no port serves an agent's /metrics here
        )
        return agent_main.build(config, process)

    def _start(self) -> None:
        """Each agent streaming, its first cycle run, then following its node's Docker."""
        try:
            address = self._jobs_address()
            while not self._cluster.loaded.wait(LOADED_POLL_SECONDS):
                if self._stopping.is_set():
                    return
            hosts = self._cluster.hosts
            gpus = [len(host.tree.node.gpus) for host in hosts.values()]
            kept = files_kept_open(gpus, kept_files_budget())
            for (name, host), keep_open in zip(hosts.items(), kept, strict=True):
                if self._stopping.is_set():
                    return
                agent = self._build(host, address, keep_open=keep_open)
                asyncio.run(agent.stream.start())
                agent.cycle.run()
                if agent.tracking is not None:
                    asyncio.run(agent.tracking.start())
                with self._lock:  # the loops run it from now on, never with its first cycle
                    self._agents[name] = agent
            self.started.set()
        except Exception as exc:  # the demo says which and stops
            self._on_failure(exc)

    def check_started(self) -> None:
        """Readiness: every node's agent runs."""
        if not self.started.is_set():
            started, nodes = len(self.agents), len(self._cluster.scenario.node_names)
            raise errors.NoDataError(f"{started} of {nodes} simulated nodes' agents started")

    async def start(self) -> None:
        """Start the agents one after the other on a thread of their own: the dashboard
        serves meanwhile, each node's figures arriving as its agent starts."""
        self._starter.start()

    def _stop(self) -> None:
        self._stopping.set()
        if self._starter.is_alive():
            self._starter.join()
        with concurrent.futures.ThreadPoolExecutor(max_workers=STOP_WORKERS) as pool:
            list(pool.map(_stop_agent, self.agents))

    async def stop(self) -> None:
        await lifecycle.in_thread(self._stop, name="simulated-agents-stop")


def _stop_agent(agent: NodeAgent) -> None:
    if agent.tracking is not None:
        asyncio.run(agent.tracking.stop())
    asyncio.run(agent.stream.stop())
    agent.cycle.close()
