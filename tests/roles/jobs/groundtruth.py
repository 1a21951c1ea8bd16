"""A scenario replayed at speed through Lens's real pipeline, in one process, on a FakeClock:
the API emulator with the scenario's player, `lens controller` watching it, a node agent per
simulated node (simnodes.py) streaming container events and GPU-minutes to `lens jobs`, and the
jobs' own loop bodies (allocation, consumers, idle GPUs, hour rollup, GPU-hours) run by the
test at their cadence. The player records the truth it enacted (lens/sim/scenario/truth.py).

Time moves in 15 s steps (the scenario's pods come and go on that grid). Every agent reads its
GPUs at each whole minute, and also every 15 s within a minute in which a pod on its node comes
or goes (known beforehand from a dry run of the same, deterministic, scenario): the loads change
only at whole minutes otherwise, so each minute's mean is what a reading every second gives.
Before the jobs run at a whole minute, the agents' minutes are stored and the controller and the
jobs' watch caches have caught up with the API server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import math
import os
import resource
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

import kubernetes
import peewee

from lens.devices.amdgpu import AmdGpuCollector
from lens.devices.sources import NodeSources
from lens.devices.sysfs import HostFiles
from lens.kube.cluster.caches import ClusterCaches
from lens.kube.machinery.reflector import watch_settings
from lens.roles.controller import main as controller_main
from lens.roles.jobs import allocation, consumers, gpuhours, idling, reporting
from lens.roles.jobs import main as jobs_main
from lens.runtime import selfmetrics
from lens.runtime.clock import FakeClock
from lens.runtime.config import (
    Config,
    ControllerConfig,
    DatabaseConfig,
    JobsConfig,
    ServerConfig,
    ServiceConfig,
)
from lens.runtime.process import Process
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario.player import ScenarioPlayer
from lens.sim.scenario.runtimes import Announcer
from lens.sim.scenario.spec import TIME_STEP_SECONDS, Scenario
from lens.sim.scenario.truth import Hold, Truth
from lens.store import database
from tests.conftest import RunningJobs
from tests.roles.jobs.simnodes import SimNode, make_node, render_nodes, until

STEP = int(TIME_STEP_SECONDS)
MINUTE = 60
ANALYZE_EVERY = 5 * MINUTE  # of the scenario's time, from its first minute


def minute_of(at: float) -> int:
    return math.floor(at / MINUTE) * MINUTE


def mid_minute_changes(truth: Truth, end: float) -> dict[int, set[str]]:
    """Per minute, the nodes on which a pod holding GPUs came or went within it (not at its
    first second), before `end`."""
    found: dict[int, set[str]] = defaultdict(set)
    for hold in truth.holds:
        for at in (hold.since, hold.until):
            if hold.gpus and at is not None and at < end and at % MINUTE:
                found[minute_of(at)].add(hold.node)
    return found


def sampling_plan(scenario: Scenario, *, start: float, end: float) -> dict[int, set[str]]:
    """mid_minute_changes of a dry run of `scenario` from `start` to `end`."""
    clock = FakeClock(start_time=start)
    kube = KubeApiServer(clock=clock, history_size=100_000)
    try:
        player = ScenarioPlayer(scenario, kube, clock=clock).load()
        player.run_until(end - start)
    finally:
        kube.stop()
    return mid_minute_changes(player.truth, end)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LensJobs:
    """The jobs' loop bodies as `lens jobs` builds them, run by the test; their gauges."""

    config: Config
    process: Process
    db: peewee.Database
    allocation: allocation.Allocation
    consumers: consumers.Consumers
    idle: idling.IdleGpus
    gpu_hours: gpuhours.DailyGpuHours
    upkeep: reporting.ReportUpkeep

    def gauge(self, name: str, **labels: str) -> float | None:
        return self.process.metrics.registry.get_sample_value(name, labels)

    def samples(self, name: str) -> dict[tuple[tuple[str, str], ...], float]:
        """Every series of gauge `name`, by its labels."""
        return {
            tuple(sorted(sample.labels.items())): sample.value
            for family in self.process.metrics.registry.collect()
            for sample in family.samples
            if sample.name == name
        }

    def roll_up(self) -> None:
        """The hour rollup: one run takes every marked hour here (up to 2,000 a run)."""
        self.upkeep.roll_up()


def _lens_jobs(
    config: Config, *, db: peewee.Database, clock: FakeClock, caches: ClusterCaches
) -> LensJobs:
    process = Process(
        "jobs", server=config.server, service=config.service, clock=clock, handle_signals=False
    )
    metrics = process.metrics
    return LensJobs(
        config=config,
        process=process,
        db=db,
        allocation=allocation.Allocation(config, caches, allocation.AllocationGauges(metrics)),
        consumers=consumers.Consumers(
            config, db=db, clock=clock, gauges=consumers.ConsumerGauges(metrics)
        ),
        idle=idling.IdleGpus(config, db=db, clock=clock, gauges=idling.IdleGauges(metrics)),
        gpu_hours=gpuhours.DailyGpuHours(config, db=db, clock=clock),
        upkeep=reporting.ReportUpkeep(config, process, db),
    )


class HeldClock:
    """A clock held at `at`: a wait for a later time lasts until the wait is stopped. The event
    server's: its loops run at its start, if they do, and never again."""

    def __init__(self, at: float) -> None:
        self._at = at

    def monotonic(self) -> float:
        return 0.0

    def time(self) -> float:
        return self._at

    def wait_until(self, deadline: float, stop: threading.Event) -> bool:
        if deadline > 0.0:
            stop.wait()
        return stop.is_set()


class ScenarioTime:
    """The scenario's FakeClock for a role's timestamps, its waits polling it ten times a
    second rather than FakeClock's two hundred (a hundred agents share the interpreter)."""

    def __init__(self, clock: FakeClock) -> None:
        self._clock = clock

    def monotonic(self) -> float:
        return self._clock.monotonic()

    def time(self) -> float:
        return self._clock.time()

    def wait_until(self, deadline: float, stop: threading.Event) -> bool:
        while self._clock.monotonic() < deadline and not stop.wait(0.1):
            pass
        return stop.is_set()


class _Service:
    """A role's process run on a thread of its own until stop()."""

    def __init__(self, process: Process) -> None:
        self._process = process
        self._thread = threading.Thread(target=process.service.run, daemon=True)
        self._thread.start()
        assert process.service.started.wait(30)

    def stop(self) -> None:
        self._process.service.request_stop("test over")
        self._thread.join(30)


class Replay:
    """Everything of one replay; built by `replay()`."""

    def __init__(self, scenario: Scenario, *, start: int, end: int, directory: Path) -> None:
        self.start, self.end = start, end
        self.clock = FakeClock(start_time=start - STEP)
        self.kube = KubeApiServer(clock=self.clock, history_size=100_000, bookmark_interval=0.05)
        self.player = ScenarioPlayer(
            scenario, self.kube, clock=self.clock, hosts_dir=directory / "hosts", start_time=start
        )
        self.plan = sampling_plan(scenario, start=start, end=end)
        self.nodes: dict[str, SimNode] = {}
        self.controller: controller_main.Controller | None = None
        self.caches: ClusterCaches | None = None
        self.jobs: LensJobs | None = None
        self._announcer = Announcer(self.player.truth)

    @property
    def truth(self) -> Truth:
        return self.player.truth

    def play(self, at_minute: Callable[[int], None]) -> None:
        """Replay from the start to the end; `at_minute(t)` at each whole minute after the
        start, once its minutes are stored and the cluster's state is seen."""
        self.clock.advance(STEP)
        self.player.load()
        for now in range(self.start, self.end + 1, STEP):
            self.player.run_until(now - self.start)
            assert self.kube.settle()
            for node in self._announce(now):
                until(node.seen, f"{node.name}'s agent to see its containers")
            due = self.plan.get(minute_of(now), set()) if now % MINUTE else self.nodes
            for name in due:
                self.nodes[name].cycle()
            if now % MINUTE == 0 and now > self.start:
                self._caught_up()
                if (now - self.start) % ANALYZE_EVERY == MINUTE:
                    self._analyze()
                at_minute(now)

    def _announce(self, now: int) -> set[SimNode]:
        """Tell each node's Docker of the pods bound and ended since the last step."""
        touched: set[SimNode] = set()
        begun, ended = self._announcer.due(now)
        for hold in begun:
            node = self.nodes[hold.node]
            node.runtime.started(hold)
            self._check_planned(hold, hold.since)
            touched.add(node)
        for hold in ended:
            assert hold.ended_by != "node-lost", "node losses are not replayed here"
            assert hold.until is not None
            node = self.nodes[hold.node]
            node.runtime.ended(hold)
            self._check_planned(hold, hold.until)
            touched.add(node)
        return touched

    def _check_planned(self, hold: Hold, at: float) -> None:
        if hold.gpus and at % MINUTE:
            planned = self.plan.get(minute_of(at), set())
            assert hold.node in planned, f"the dry run did not foresee {hold.pod_name} at {at}"

    def _analyze(self) -> None:
        """What PostgreSQL's autovacuum does every minute of real time, so that its planner
        knows how the tables grew: an hour's rows arrive here in a minute or two."""
        assert self.jobs is not None
        if database.engine_of(self.jobs.db) == "postgresql":
            with database.session(self.jobs.db):
                database.execute(self.jobs.db, "ANALYZE")

    def _caught_up(self) -> None:
        until(lambda: all(n.shipped() for n in self.nodes.values()), "the minutes to be stored")
        version = self.kube.store.resource_version
        assert self.controller is not None and self.caches is not None
        (sync,) = self.controller.fleet.syncs()
        until(lambda: sync.caught_up(version), "the controller to catch up")
        caches = self.caches

        def cached() -> bool:
            seen = [r.version for r in (caches.nodes, caches.pods)]
            return all(v.isdigit() and int(v) >= version for v in seen)

        until(cached, "the jobs' watch caches to catch up")


@contextlib.contextmanager
def replay(
    scenario: Scenario, *, start: int, end: int, url: str, directory: Path
) -> Iterator[Replay]:
    """A replay of `scenario` from `start` to `end` (whole minutes) storing to `url`, every
    part started and, on leaving, stopped."""
    with contextlib.ExitStack() as stack:
        # The process metrics of a role are its process's: here every role shares one.
        stack.enter_context(mock.patch.object(selfmetrics, "ProcessCollector", _NoProcessMetrics))
        if not _more_open_files():
            reading_each_time = mock.patch.object(
                NodeSources, "amd_collector", _collector_reading_each_time
            )
            stack.enter_context(reading_each_time)
        built = Replay(scenario, start=start, end=end, directory=directory)
        built.kube.start()
        stack.callback(built.kube.stop)
        config = _config(url)
        # The event server's own clock stays at the start: its leader-only loops do not run
        # again, so the figures come only from the bodies the test runs (it takes minutes up to
        # a day ahead of its clock).
        jobs_process = Process(
            "jobs",
            server=config.server,
            service=config.service,
            clock=HeldClock(start),
            handle_signals=False,
        )
        jobs = RunningJobs(jobs_main.build(config, jobs_process))
        stack.callback(jobs.stop)
        _start_nodes(built, directory, jobs.address, stack)
        api = _api(built.kube, stack)
        built.controller = _start_controller(
            config, api, clock=built.clock, db=jobs.jobs.db, stack=stack
        )
        built.caches = caches = ClusterCaches(api, watch=watch_settings(config.kube))
        asyncio.run(caches.start())
        stack.callback(lambda: asyncio.run(caches.stop()))
        assert caches.wait_synced(30)
        built.jobs = _lens_jobs(config, db=jobs.jobs.db, clock=built.clock, caches=built.caches)
        yield built


def _config(url: str) -> Config:
    return Config(
        database=DatabaseConfig(url=url),
        server=ServerConfig(host="127.0.0.1", port=0),
        service=ServiceConfig(loop_jitter_ratio=0),
        controller=ControllerConfig(leader_election=False, kubelet_service=""),
        jobs=JobsConfig(
            grpc_host="127.0.0.1", grpc_port=0, watch_cluster="off", daily_report_time=""
        ),
    )


class _NoProcessMetrics:
    """In place of prometheus_client's ProcessCollector: a hundred agents in one interpreter
    would each list its thousands of open files (/proc/self/fd) at every cycle."""

    def __init__(self, registry: object = None) -> None:
        self.registry = registry


def _stop_all(nodes: list[SimNode], directory: Path) -> None:
    """Stop the nodes at once (each waits a little for its threads), then close the sysfs files
    their collectors kept open under `directory`: an agent's die with its process, and here a
    hundred agents' would be left to the rest of the test run."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(nodes) or 1) as pool:
        list(pool.map(SimNode.stop, nodes))
    within = str(directory)
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # gone meanwhile, or the listing's own descriptor
            if os.readlink(f"/proc/self/fd/{fd}").startswith(within):
                os.close(int(fd))


def _more_open_files(wanted: int = 65536) -> bool:
    """Each agent keeps its GPUs' sysfs files open: a hundred agents need some 20,000, beside
    what the rest of the test run holds. The soft limit goes as far as the hard one allows;
    whether that is `wanted`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return True
    limit = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, limit), hard))
    return limit >= wanted


def _collector_reading_each_time(sources: NodeSources) -> AmdGpuCollector:
    """An agent's AMD collector opening each file at each read: where the process may not
    keep open the files of a hundred agents (each agent has a process of its own in a real
    cluster, and its own limit)."""
    return AmdGpuCollector(
        HostFiles(sources.host.root, keep_open=False), static_facts=sources.statics.facts
    )


def _start_nodes(
    built: Replay, directory: Path, jobs_address: str, stack: contextlib.ExitStack
) -> None:
    renders = render_nodes(directory / "dev", max(built.player.truth.capacity.values()))
    sockets = directory / "docker"
    sockets.mkdir()
    stack.callback(lambda: _stop_all(list(built.nodes.values()), directory / "hosts"))
    for index, name in enumerate(built.player.scenario.node_names):
        node = make_node(
            built.player.host_tree(name),
            clock=built.clock,
            renders=renders,
            socket=sockets / f"{index}.sock",
            jobs_address=jobs_address,
        )
        built.nodes[name] = node
        node.start()  # its first cycle, a step before the scenario starts
    until(lambda: all(n.following() for n in built.nodes.values()), "every agent to follow Docker")


def _api(kube: KubeApiServer, stack: contextlib.ExitStack) -> kubernetes.client.ApiClient:
    configuration = kubernetes.client.Configuration()
    configuration.host = kube.url
    api = kubernetes.client.ApiClient(configuration)
    stack.callback(api.close)
    return api


def _start_controller(
    config: Config,
    api: kubernetes.client.ApiClient,
    *,
    clock: FakeClock,
    db: peewee.Database,
    stack: contextlib.ExitStack,
) -> controller_main.Controller:
    process = Process(
        "controller",
        server=config.server,
        service=config.service,
        clock=ScenarioTime(clock),
        handle_signals=False,
    )
    # One Database per process: opening one binds every model to it (lens.store.database), so
    # the controller takes the jobs' as `lens up` shares one between its roles.
    process.shared(f"database {config.database.url}", lambda: db)
    controller = controller_main.build(config, process, api=api)
    service = _Service(process)
    stack.callback(service.stop)
    return controller
