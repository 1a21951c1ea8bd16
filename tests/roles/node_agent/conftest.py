"""Fixtures: a node agent built on a simulated host tree with a fake clock."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable, Iterator

import pytest

from lens.roles.node_agent import main
from lens.roles.node_agent.main import NodeAgent
from lens.runtime.clock import FakeClock
from lens.runtime.config import (
    Config,
    ContainersConfig,
    EventsConfig,
    HostConfig,
    KubeletConfig,
    NodeAgentConfig,
    ServerConfig,
    ServiceConfig,
)
from lens.runtime.process import Process
from lens.sim.hosts.tree import HostTree

MakeAgent = Callable[..., NodeAgent]


@pytest.fixture
def make_agent(clock: FakeClock) -> Iterator[MakeAgent]:
    """make_agent(tree, nvml=None, kubelet=None, events=None, containers=None,
    **node_agent_settings) -> a built NodeAgent (containers: no runtime followed unless given)."""
    built: list[NodeAgent] = []

    def make(
        tree: HostTree,
        *,
        nvml: object | None = None,
        kubelet: KubeletConfig | None = None,
        tool_timeout: float = 10,
        events: EventsConfig | None = None,
        containers: ContainersConfig | None = None,
        **settings: object,
    ) -> NodeAgent:
        config = Config(
            host=HostConfig(root=str(tree.root), tool_timeout_seconds=tool_timeout),
            server=ServerConfig(host="127.0.0.1", port=0),
            service=ServiceConfig(loop_jitter_ratio=0),
            kubelet=kubelet or KubeletConfig(),
            node_agent=NodeAgentConfig(node_name="gpu-node-1", **settings),
            containers=containers or ContainersConfig(containerd_address=""),
            events=events or EventsConfig(),
        )
        process = Process(
            "node-agent",
            server=config.server,
            service=config.service,
            clock=clock,
            handle_signals=False,
        )
        agent = main.build(config, process, nvml_binding=nvml)
        built.append(agent)
        return agent

    yield make
    for agent in built:
        agent.cycle.close()


class Running:
    """A started agent service, and GETs against its port."""

    def __init__(self, agent: NodeAgent) -> None:
        self.agent = agent
        self.codes: list[int] = []
        self.thread = threading.Thread(
            target=lambda: self.codes.append(agent.process.service.run())
        )

    def get(self, path: str) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.agent.process.http.port, timeout=5)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def data(self, path: str) -> object:
        status, body = self.get(path)
        assert status == 200, body
        document = json.loads(body)
        assert document["meta"] == {"code": 2000, "message": "OK"} and document["tracing"] is None
        return document["data"]


@pytest.fixture
def start() -> Iterator[Callable[[NodeAgent], Running]]:
    started: list[Running] = []

    def run(agent: NodeAgent) -> Running:
        running = Running(agent)
        running.thread.start()
        assert agent.process.service.started.wait(10)
        started.append(running)
        return running

    yield run
    for running in started:
        running.agent.process.service.request_stop("test over")
        running.thread.join(15)
        assert running.codes == [0]
