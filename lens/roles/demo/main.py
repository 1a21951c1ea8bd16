"""`lens demo`: `lens up` against a simulated cluster — the API emulator replaying a preset
scenario (lens/sim/scenario/living.py), a node agent per simulated node (agents.py), the
controller and the jobs watching the emulator, a log collector shipping what the training pods
print to the jobs' log intake (logshipping.py), and the API with its dashboard marked as
simulated — in one process on a fresh SQLite database under `directory`.

`plan` gives the roles in the order they start: the cluster first, then the jobs (whose event
server the agents stream to) and the controller (both pointed at the emulator once it exists),
the agents, the log collector, and last the API with the line announcing its URL. With `speed`
above 1 the whole process runs on a clock up to that many times faster (the cluster's time: an
hour of cluster life in a minute at 60), slowed while the host cannot keep up (pacing.py), and
the dashboard reads its "now" and rate from the API. A speed over what the preset sustains
(SUSTAINED_SPEEDS) is warned of.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lens.roles.api import main as api_main
from lens.roles.controller import main as controller_main
from lens.roles.demo.agents import LOOPBACK, SimulatedAgents
from lens.roles.demo.logshipping import LogShipper
from lens.roles.demo.pacing import Pacer
from lens.roles.jobs import main as jobs_main
from lens.roles.jobs import telemetry
from lens.roles.up import main as up_main
from lens.runtime.clock import Clock
from lens.runtime.config import Config, DatabaseConfig, KubeConfig
from lens.runtime.launcher import Role
from lens.runtime.periodic import Loop
from lens.runtime.process import Process
from lens.sim.scenario import spec
from lens.sim.scenario.living import LivingCluster
from lens.sim.scenario.replaying import ScaledClock
from lens.sim.scenario.spec import Scenario

# The presets a demo runs: "large" (1,000 nodes) would be a thousand agents in one process.
PRESETS = ("small", "medium")
# The highest --speed each preset sustains on SUSTAINED_ON_CORES cores: at every look over ten
# minutes of the cluster's time every GPU read and every allocated GPU held, no error logged, the
# clock never slowed (python -m bench demo --mode sustained; PERFORMANCE.md). Above it the demo
# says so and runs: its clock slows to what the host keeps up with (pacing.py), and a host with
# more cores, or a quieter one, keeps up with more.
SUSTAINED_SPEEDS = {"small": 60.0, "medium": 3.0}
SUSTAINED_ON_CORES = 2


SHIP_SECONDS = 2.0
BUSY_TIMEOUT_SECONDS = 600.0  # the setting's largest
# The process's metrics render and readiness checks run on the cluster's clock: at 60 times real
# time, a render every 83 ms of real time took half a core. Their intervals are stretched by the
# speed, up to this factor: the clock keeps real time until every agent runs (pacing.py), and a
# readiness checked every 5 minutes of it would be no check.
HOUSEKEEPING_STRETCH_MAX = 10.0


def clock(speed: float) -> ScaledClock:
    """The demo process's clock: the cluster's time, `speed` times as fast as real time, or
    slower while the host cannot keep up (pacing.py)."""
    return ScaledClock(speed)


@dataclasses.dataclass
class _Builds:
    """The demo's own role builds. A later one reads what an earlier one built: the launcher
    builds the roles in order."""

    scenario: Scenario
    speed: float
    directory: Path
    cluster: LivingCluster | None = None
    jobs: jobs_main.Jobs | None = None
    agents: SimulatedAgents | None = None

    def kube_url(self) -> str:
        if self.cluster is None:
            raise RuntimeError("the simulated cluster is built first")
        return self.cluster.url

    def jobs_address(self) -> str:
        if self.jobs is None:
            raise RuntimeError("the jobs are built before the agents")
        return f"{LOOPBACK}:{self.jobs.grpc.port}"

    def build_cluster(self, config: Config, process: Process) -> LivingCluster:
        def failed(exc: BaseException) -> None:
            process.service.fail(exc, part=LivingCluster.name)

        self.cluster = LivingCluster(
            self.scenario, clock=process.clock, directory=self.directory, on_failure=failed
        )
        process.add_part(self.cluster)
        if self.speed > 1:
            pacer = Pacer(_scaled(process.clock), busiest=process.loops.busiest, ready=self.running)
            process.add_part(pacer)
        return self.cluster

    def running(self) -> bool:
        """Every node's agent runs."""
        return self.agents is not None and self.agents.started.is_set()

    def build_jobs(self, config: Config, process: Process) -> jobs_main.Jobs:
        self.jobs = jobs_main.build(_with_kube(config, self.kube_url()), process)
        return self.jobs

    def build_controller(self, config: Config, process: Process) -> controller_main.Controller:
        return controller_main.build(_with_kube(config, self.kube_url()), process)

    def build_api(self, config: Config, process: Process) -> api_main.Api:
        wired = _with_kube(config, self.kube_url())
        scaled = _scaled(process.clock)
        return api_main.build(wired, process, simulated=True, clock_rate=lambda: scaled.rate)

    def build_log_shipper(self, config: Config, process: Process) -> LogShipper:
        if self.cluster is None:
            raise RuntimeError("the simulated cluster is built before its log collector")
        shipper = LogShipper(
            self.cluster.player.truth,
            clock=process.clock,
            url=lambda: f"http://{LOOPBACK}:{process.http.port}{telemetry.LOGS_PATH}",
        )
        # Every 2 s of real time, whatever the speed (the cluster's clock drives the loop).
        interval = max(SHIP_SECONDS, SHIP_SECONDS * self.speed)
        process.add_loop(
            Loop(name="simulated-log-shipping", interval_seconds=interval, run=shipper.ship)
        )
        return shipper

    def build_agents(self, config: Config, process: Process) -> SimulatedAgents:
        if self.cluster is None:
            raise RuntimeError("the simulated cluster is built before the agents")
        part = SimulatedAgents(
            config,
            self.cluster,
            clock=process.clock,
            speed=self.speed,
            jobs_address=self.jobs_address,
            stopping=process.loops.stopping,
            on_failure=lambda exc: process.service.fail(exc, part=SimulatedAgents.name),
        )
        process.add_part(part)
        for loop in part.loops():
            process.add_loop(loop)
        process.health.add_readiness("simulated_agents", part.check_started)
        self.agents = part
        return part

    def roles(self, wired: Config) -> tuple[Role, ...]:
        return (
            Role(
                name="simulated-cluster",
                starting="simulated cluster starting",
                sections=(),
                build=self.build_cluster,
                describe=lambda made: _describe(made, self.speed),
            ),
            dataclasses.replace(jobs_main.ROLE, build=self.build_jobs),
            dataclasses.replace(controller_main.ROLE, build=self.build_controller),
            Role(
                name="simulated-agents",
                starting="simulated node agents starting",
                sections=("node_agent",),
                build=self.build_agents,
            ),
            Role(
                name="simulated-log-collector",
                starting="simulated log collector starting",
                sections=(),
                build=self.build_log_shipper,
            ),
            up_main.announced(wired, build=self.build_api),
        )


def configured(config: Config, directory: Path, *, speed: float = 1.0) -> Config:
    """The config every role of the demo reads: a fresh SQLite database under `directory`, the
    jobs' event server on a free loopback port, no Lease (one process), no daily report file,
    and no kubelet Service (the simulated nodes' addresses lead nowhere). The process's own
    metrics render and readiness checks are spaced out at `speed` (they follow the process,
    not the cluster), and a writer waits for SQLite's lock as long as it must: on a loaded
    host a slow write is the cluster's clock to slow, not a write to lose.

    The kube section is the defaults': each role is pointed at the simulated API server once
    it listens (its URL is in the "simulated cluster starting" line), and the user's own
    kubeconfig, found at load, is neither read nor logged."""
    service = config.service
    housekeeping = min(speed, HOUSEKEEPING_STRETCH_MAX)
    return dataclasses.replace(
        config,
        database=DatabaseConfig(
            url=f"sqlite:///{directory / 'lens.db'}", busy_timeout_seconds=BUSY_TIMEOUT_SECONDS
        ),
        service=dataclasses.replace(
            service,
            metrics_interval_seconds=service.metrics_interval_seconds * housekeeping,
            readiness_interval_seconds=service.readiness_interval_seconds * housekeeping,
        ),
        kube=KubeConfig(),
        jobs=dataclasses.replace(
            config.jobs,
            grpc_host=LOOPBACK,
            grpc_port=0,
            lease="",
            watch_cluster="on",
            daily_report_time="",
        ),
        controller=dataclasses.replace(
            config.controller, leader_election=False, kubelet_service=""
        ),
    )


def without_rdma(scenario: Scenario) -> Scenario:
    """`scenario` with nodes that have no RDMA ports: the demo's agents read none (no rdma
    collector), and a node's host tree has half the files without them — written at start,
    removed at the end (a medium demo's 130,000 files took 15 s to remove on a loaded host)."""
    nodes = tuple(dataclasses.replace(group, rdma=0) for group in scenario.nodes)
    return dataclasses.replace(scenario, nodes=nodes)


def _with_kube(config: Config, url: str) -> Config:
    return dataclasses.replace(config, kube=KubeConfig(source="url", url=url))


def plan(
    config: Config,
    *,
    preset: str,
    speed: float,
    directory: Path,
    rdma_ports: bool = False,
) -> up_main.Plan:
    """The roles of a demo of `preset` at `speed` keeping its files under `directory`; its
    nodes' host trees have the preset's RDMA ports only when asked (`rdma_ports`: an agent of
    one's own reads them, as the Grafana lab's do; the demo's agents read none)."""
    scenario = spec.preset(preset) if rdma_ports else without_rdma(spec.preset(preset))
    wired = configured(config, directory, speed=speed)
    roles = _Builds(scenario=scenario, speed=speed, directory=directory).roles(wired)
    pace = "real time" if speed == 1 else f"{speed:g} times real time"
    notes = (
        f"simulated cluster {scenario.name!r}: {len(scenario.node_names)} nodes, "
        f"{scenario.gpu_count} GPUs, living at {pace}",
        f"its database and files under {directory} (removed when the demo stops)",
    )
    warning = speed_warning(preset, speed)
    return up_main.Plan(
        config=wired, roles=roles, notes=notes if warning is None else (*notes, warning)
    )


def speed_warning(preset: str, speed: float) -> str | None:
    """What the demo says of a speed above what `preset` sustains; None at or under it."""
    highest = SUSTAINED_SPEEDS[preset]
    if speed <= highest:
        return None
    return (
        f"warning: --speed {speed:g} is over the {highest:g} the {preset} preset sustains on "
        f"{SUSTAINED_ON_CORES} cores: its clock slows to what this host keeps up with (the "
        "dashboard's header says how fast it lives)"
    )


def _scaled(clock: Clock) -> ScaledClock:
    if not isinstance(clock, ScaledClock):
        raise TypeError(f"lens demo runs on its cluster's clock (clock()), not {clock!r}")
    return clock


def _describe(cluster: LivingCluster, speed: float) -> dict[str, object]:
    scenario = cluster.scenario
    return {
        "scenario": scenario.name,
        "nodes": len(scenario.node_names),
        "gpus": scenario.gpu_count,
        "speed": speed,
        "kube_url": cluster.url,
    }
