"""The nodes of a replayed scenario, in one process: each a host tree whose GPUs the scenario's
pods keep busy, a Docker stand-in running a container for each pod bound to it, and a real node
agent (lens.roles.node_agent) following that Docker and streaming to `lens jobs`.

A pod's container is created and started when its pod is bound and dies when it finishes, at
the scenario's times, its device nodes those of the GPUs the pod holds (real character devices
with the host tree's render numbers, shared by every node), its labels the kubelet's CRI labels.
The test drives each agent's collection cycle on the scenario's FakeClock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from lens.roles.node_agent import main as agent_main
from lens.roles.node_agent.main import NodeAgent
from lens.runtime import errors
from lens.runtime.clock import FakeClock
from lens.runtime.config import (
    Config,
    ContainersConfig,
    EventsConfig,
    HostConfig,
    NodeAgentConfig,
    ServerConfig,
    ServiceConfig,
)
from lens.runtime.process import Process
from lens.sim.containerd import make_device_node
from lens.sim.hosts.tree import HostTree
from lens.sim.scenario.runtimes import ScriptedRuntime

RENDER_MAJOR, RENDER_FIRST_MINOR = 226, 128
# How often an agent reads its GPUs: 4 readings a whole minute (it is read once a minute when
# none of its pods comes or goes within it, every 15 s when one does).
GPU_INTERVAL_SECONDS = 15.0
WAIT_SECONDS = 60.0


def render_nodes(directory: Path, gpus: int) -> list[Path]:
    """Character devices standing in for /dev/dri/renderD128... (needs root)."""
    return [
        make_device_node(
            directory / f"renderD{RENDER_FIRST_MINOR + i}", RENDER_MAJOR, RENDER_FIRST_MINOR + i
        )
        for i in range(gpus)
    ]


def until(check: Callable[[], bool], what: str, timeout: float = WAIT_SECONDS) -> None:
    """Wait for `check`, looking every 10 ms (the threads it waits for need the interpreter)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}")
        time.sleep(0.01)


class SimNode:
    """One node: its host tree, Docker stand-in and node agent."""

    def __init__(self, tree: HostTree, agent: NodeAgent, runtime: ScriptedRuntime) -> None:
        self.name = tree.spec.name
        self.tree, self.agent, self.runtime = tree, agent, runtime

    def cycle(self) -> None:
        """One collection cycle at the clock's now, on readings of now."""
        self.tree.update_gpus()
        self.agent.cycle.run()

    def start(self) -> None:
        """Stream to the jobs; follow Docker once the first cycle knows the devices."""
        assert self.agent.tracking is not None
        asyncio.run(self.agent.stream.start())
        asyncio.run(self.agent.tracking.start())
        self.cycle()

    def following(self) -> bool:
        tracking = self.agent.tracking
        assert tracking is not None
        try:
            tracking.check_subscribed()
        except errors.NoDataError:  # until the watcher has listed Docker's containers
            return False
        return True

    def seen(self) -> bool:
        """Whether the agent has seen every container as the runtime last left it."""
        tracking = self.agent.tracking
        assert tracking is not None
        live = {c.id: c.status for c in tracking.containers()}
        return all(
            live.get(cid) == status if status != "Deleted" else cid not in live
            for cid, status in self.runtime.expected.items()
        )

    def shipped(self) -> bool:
        """Whether the jobs acknowledged everything the agent put on its stream."""
        return len(self.agent.stream.outbox) == 0

    def stop(self) -> None:
        tracking = self.agent.tracking
        if tracking is not None:
            asyncio.run(tracking.stop())
        asyncio.run(self.agent.stream.stop())
        self.agent.cycle.close()
        self.runtime.stop()


def make_node(
    tree: HostTree, *, clock: FakeClock, renders: list[Path], socket: Path, jobs_address: str
) -> SimNode:
    runtime = ScriptedRuntime(socket, renders)
    config = Config(
        host=HostConfig(root=str(tree.root)),
        server=ServerConfig(host="127.0.0.1", port=0),
        service=ServiceConfig(loop_jitter_ratio=0),
        node_agent=NodeAgentConfig(
            node_name=tree.spec.name,
            collectors=("amdgpu", "dri"),
            gpu_interval_seconds=GPU_INTERVAL_SECONDS,
            dri_interval_seconds=3600,
        ),
        containers=ContainersConfig(
            containerd_address="", docker_address=str(socket), pod_resources_socket=""
        ),
        events=EventsConfig(server_address=jobs_address),
    )
    process = Process(
        "node-agent",
        server=config.server,
        service=config.service,
        clock=clock,
        handle_signals=False,
    )
    return SimNode(tree, agent_main.build(config, process), runtime)
