"""The demo's node agents: each configured to read its own simulated node, with time limits
that stay real under a faster clock, and stopped promptly even before any started."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import threading
import time
from pathlib import Path

import pytest

from lens.devices.sources import node_sources
from lens.roles.demo.agents import (
    KEPT_FILES_PER_GPU,
    KEPT_SHARE_OF_LIMIT,
    SimulatedAgents,
    agent_config,
    files_kept_open,
    kept_files_budget,
)
from lens.runtime import errors
from lens.runtime.clock import FakeClock
from lens.sim.scenario.living import LivingCluster
from lens.sim.scenario.spec import NodeGroup, Scenario, Workload
from tests.roles.demo.running import config

SCENARIO = Scenario(
    name="t",
    nodes=(NodeGroup(count=2),),
    workloads=(Workload(kind="Deployment", name="serve", gpus_per_pod=2),),
)


def test_each_agent_reads_its_own_node(tmp_path: Path) -> None:
    cluster = LivingCluster(
        SCENARIO, clock=FakeClock(), directory=tmp_path, on_failure=lambda _e: None
    )
    try:
        cluster.load()
        host = cluster.hosts["gpu-node-0001"]
        agent = agent_config(config(), host, jobs_address="127.0.0.1:5000", speed=60)
        assert agent.host.root == str(host.tree.root)
        assert agent.node_agent.node_name == "gpu-node-0001"
        assert agent.containers.docker_address == host.docker_socket
        assert agent.containers.containerd_address == ""
        assert agent.containers.pod_resources_socket == str(host.kubelet.socket_path)
        assert agent.kubelet.url == host.kubelet.url
        assert Path(agent.kubelet.token_file).read_text() == "lens-demo-kubelet"
        assert agent.kubelet.ca_file == str(host.kubelet.cert.ca_file)
        assert agent.events.server_address == "127.0.0.1:5000"
        assert (agent.server.host, agent.server.port) == ("127.0.0.1", 0)
        # 10 s of real time is 600 s of a cluster living 60 times as fast.
        assert agent.node_agent.collector_timeout_seconds == 600
        slower = agent_config(config(), host, jobs_address="127.0.0.1:5000", speed=1)
        assert slower.node_agent.collector_timeout_seconds == 10
        # What never changes on a simulated node is read rarely: its DRI devices, and its
        # containers listed again (the Docker stand-in's events miss none).
        assert agent.node_agent.dri_interval_seconds == 60
        assert agent.containers.reconcile_interval_seconds == 300
    finally:
        asyncio.run(cluster.stop())


def test_a_stop_before_the_hosts_exist_is_prompt(tmp_path: Path) -> None:
    cluster = LivingCluster(
        SCENARIO, clock=FakeClock(), directory=tmp_path, on_failure=lambda _e: None
    )
    failures: list[BaseException] = []
    agents = SimulatedAgents(
        config(),
        cluster,
        clock=FakeClock(),
        speed=1,
        jobs_address=lambda: "127.0.0.1:5000",
        stopping=threading.Event(),
        on_failure=failures.append,
    )
    asyncio.run(agents.start())  # waits for the cluster's hosts, which never come
    with pytest.raises(errors.NoDataError, match="0 of 2 simulated nodes' agents started"):
        agents.check_started()
    began = time.monotonic()
    asyncio.run(agents.stop())
    assert time.monotonic() - began < 5
    asyncio.run(cluster.stop())
    assert agents.agents == [] and not agents.started.is_set() and failures == []


@pytest.mark.slow_timeout
def test_a_pass_over_the_agents_ends_once_their_loops_are_stopping(tmp_path: Path) -> None:
    # A pass over a hundred agents went on to the last while the demo was asked to stop: Ctrl-C
    # took 74 s (#36). It now ends at the agent it is on.
    clock = FakeClock()
    cluster = LivingCluster(SCENARIO, clock=clock, directory=tmp_path, on_failure=lambda _e: None)
    stopping = threading.Event()
    failures: list[BaseException] = []
    agents = SimulatedAgents(
        config(),
        cluster,
        clock=clock,
        speed=1,
        jobs_address=lambda: "127.0.0.1:9",  # nothing listens: events are kept, not lost
        stopping=stopping,
        on_failure=failures.append,
    )
    try:
        cluster.load()
        asyncio.run(agents.start())
        assert agents.started.wait(30) and failures == []
        before = [agent.cycle.cycles for agent in agents.agents]
        assert before == [1, 1], "each agent's first cycle, run as it started"
        agents.collect()
        assert [agent.cycle.cycles for agent in agents.agents] == [2, 2]
        stopping.set()
        agents.collect()
        assert [agent.cycle.cycles for agent in agents.agents] == [2, 2]
    finally:
        asyncio.run(agents.stop())
        asyncio.run(cluster.stop())


def test_agents_keep_their_files_open_only_within_a_quarter_of_the_open_file_limit() -> None:
    # 100 nodes of 8 GPUs against a limit of 20,000: the first 36 keep theirs (4,896 of 5,000).
    kept = files_kept_open([8] * 100, 20_000 // KEPT_SHARE_OF_LIMIT)
    assert kept == [True] * 36 + [False] * 64
    assert files_kept_open([8, 0, 4], 0) == [False, True, False]  # a node without GPUs keeps none
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert kept_files_budget() == (1 << 30 if soft == resource.RLIM_INFINITY else soft // 4)


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_an_agent_of_8_gpus_keeps_the_files_counted_for_it_or_none(tmp_path: Path) -> None:
    cluster = LivingCluster(
        SCENARIO, clock=FakeClock(), directory=tmp_path, on_failure=lambda _e: None
    )
    try:
        cluster.load()
        host = cluster.hosts["gpu-node-0001"]
        assert len(host.tree.node.gpus) == 8
        for keep_open, expected in ((True, KEPT_FILES_PER_GPU * 8), (False, 0)):
            cfg = agent_config(config(), host, jobs_address="", speed=1, keep_files_open=keep_open)
            sources = node_sources(cfg.host, wall_time=time.time)
            collector = sources.amd_collector()
            before = _open_descriptors()
            collector.collect()
            collector.collect()
            assert _open_descriptors() - before == expected
    finally:
        _close_files_under(tmp_path)  # what the collector kept (it lives as long as its agent)
        asyncio.run(cluster.stop())


def _close_files_under(directory: Path) -> None:
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # gone meanwhile, or the listing's own descriptor
            if os.readlink(f"/proc/self/fd/{fd}").startswith(str(directory)):
                os.close(int(fd))
