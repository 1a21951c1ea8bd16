"""`lens node-agent`: the device and kubelet collectors, their cycle, container tracking, REST.

`build()` adds the agent to a process (tests drive it with a fake clock, host tree and NVML);
`ROLE` is what the CLI launches. Before the first cycle, vendors are detected and static facts
read once, so the first scrape already carries the final identity labels.
"""

from __future__ import annotations

import dataclasses
import logging
import socket
from collections.abc import Callable

from lens.devices.sources import node_sources, nvidia_driver
from lens.devices.statics import StaticFactsSource
from lens.devices.vendors import VendorPresence
from lens.kube.kubelet.client import KubeletClient
from lens.roles.node_agent import collectors, rest
from lens.roles.node_agent.cycle import CollectionCycle, CollectorMetrics
from lens.roles.node_agent.holders import HolderBoard
from lens.roles.node_agent.refreshing import StaticRefresh
from lens.roles.node_agent.reporting import DeviceReports, ReportMetrics
from lens.roles.node_agent.state import AgentState
from lens.roles.node_agent.streaming import EventStream
from lens.roles.node_agent.tracking import ContainerTracking, DeviceTable
from lens.runtime import errors, httpserver
from lens.runtime.clock import Clock
from lens.runtime.config import Config
from lens.runtime.launcher import Role
from lens.runtime.periodic import Loop
from lens.runtime.process import Process

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeAgent:
    process: Process
    cycle: CollectionCycle
    state: AgentState
    statics: StaticFactsSource
    vendors: VendorPresence
    node_name: str
    tracking: ContainerTracking | None
    stream: EventStream
    reports: DeviceReports | None
    holders: HolderBoard


def _enabled(config: Config) -> list[str]:
    enabled = list(config.node_agent.collectors)
    collectors.check_names(enabled)
    if not config.kubelet.url:
        dropped = [n for n in enabled if n in collectors.KUBELET_COLLECTORS]
        if dropped:
            log.info("kubelet collectors off: kubelet.url is empty", extra={"collectors": dropped})
        enabled = [n for n in enabled if n not in collectors.KUBELET_COLLECTORS]
    return enabled


def _parts(config: Config, clock: Clock, nvml_binding: object | None) -> collectors.AgentParts:
    sources = node_sources(config.host, wall_time=clock.time, nvml_binding=nvml_binding)
    # Built now, so a bad CA file fails the start rather than every cycle.
    kubelet = KubeletClient(config.kubelet) if config.kubelet.url else None

    def kubelet_client() -> KubeletClient:
        if kubelet is None:
            raise errors.NoDataError("no kubelet URL configured (kubelet.url)")
        return kubelet

    return collectors.AgentParts(
        config=config.node_agent,
        sources=sources,
        state=AgentState(clock.time),
        kubelet=kubelet_client,
        holders=HolderBoard(),
    )


def _nvidia_driver(state: AgentState) -> Callable[[], str | None]:
    def version() -> str | None:
        observed = state.gpus["nvidia"].get()
        return None if observed is None else nvidia_driver(observed.value.gpus)

    return version


def build(config: Config, process: Process, *, nvml_binding: object | None = None) -> NodeAgent:
    """Add the agent to `process`; vendors detected and static facts read once already."""
    process.metrics.reserve(collectors.family_names(), by="the node agent's collectors")
    enabled = _enabled(config)  # before any tool runs: a typo fails the start at once
    parts = _parts(config, process.clock, nvml_binding)
    metrics = CollectorMetrics(process.metrics)
    refresh = StaticRefresh(
        vendors=parts.sources.vendors,
        statics=parts.sources.statics,
        metrics=metrics,
        clock=process.clock,
    )
    refresh()  # never raises: whatever the tools print, the agent starts
    cycle = CollectionCycle(
        collectors.bindings(parts, enabled),
        clock=process.clock,
        metrics=metrics,
        publish=process.publisher.publish,
    )
    process.publisher.add_text(cycle)
    process.add_loop(Loop(name="collect", interval_seconds=cycle.tick_seconds, run=cycle.run))
    process.add_loop(
        Loop(
            name="statics",
            interval_seconds=config.node_agent.static_refresh_seconds,
            run=refresh,
            run_at_start=False,
            stall_seconds=3 * config.host.tool_timeout_seconds + 60,
        )
    )
    node_name = config.node_agent.node_name or socket.gethostname()
    stream, tracking, reports = _streamed(config, parts, process, cycle, node_name)
    _serve_api(process, parts, tracking)
    metrics_route = httpserver.ops_routes(process.health, process.cache)["/metrics"]
    process.add_route("/v1/metrics", metrics_route)
    process.health.add_readiness("collection", _first_cycle(cycle))
    process.health.add_readiness("static_facts", refresh.check)
    process.add_part(_Closer(cycle))
    return NodeAgent(
        process=process,
        cycle=cycle,
        state=parts.state,
        statics=parts.sources.statics,
        vendors=parts.sources.vendors,
        node_name=node_name,
        tracking=tracking,
        stream=stream,
        reports=reports,
        holders=parts.holders,
    )


def _streamed(
    config: Config,
    parts: collectors.AgentParts,
    process: Process,
    cycle: CollectionCycle,
    node_name: str,
) -> tuple[EventStream, ContainerTracking | None, DeviceReports | None]:
    """The event stream to `lens jobs` and what puts records in it."""
    stream = EventStream(
        config.events, node=node_name, metrics=process.metrics, wall_time=process.clock.time
    )
    process.add_part(stream)
    tracking = _tracking(config, parts, process, cycle, stream)
    return stream, tracking, _reports(config, parts, process, cycle, stream, tracking)


def _serve_api(
    process: Process, parts: collectors.AgentParts, tracking: ContainerTracking | None
) -> None:
    api = rest.NodeApi(
        parts.state,
        statics=parts.sources.statics.current,
        nvidia_driver=_nvidia_driver(parts.state),
        containers=tracking.containers if tracking is not None else None,
    )
    for path, handler in api.routes().items():
        process.add_route(path, handler)


def _tracking(
    config: Config,
    parts: collectors.AgentParts,
    process: Process,
    cycle: CollectionCycle,
    stream: EventStream,
) -> ContainerTracking | None:
    """Container tracking, started after the first cycle; None when no runtime is set."""
    if not config.containers.containerd_address and not config.containers.docker_address:
        log.info("container tracking off: no containerd_address or docker_address")
        return None
    tracking = ContainerTracking(
        containers=config.containers,
        emit=stream.put,
        host_root=config.host.root,
        lookup=DeviceTable(parts.sources.host, parts.state),
        metrics=process.metrics,
        fail=lambda exc: process.service.fail(exc, part=ContainerTracking.name),
        wall_time=process.clock.time,
    )
    cycle.after_first(tracking.devices_known)
    parts.holders.attach(tracking.containers)
    process.add_part(tracking)
    process.health.add_readiness("containers", tracking.check_subscribed)
    process.add_loop(
        Loop(
            name="containers",
            interval_seconds=config.containers.reconcile_interval_seconds,
            run=tracking.reconcile,
            run_at_start=False,
        )
    )
    return tracking


def _reports(
    config: Config,
    parts: collectors.AgentParts,
    process: Process,
    cycle: CollectionCycle,
    stream: EventStream,
    tracking: ContainerTracking | None,
) -> DeviceReports | None:
    """Per-minute device reports and the inventory, when a server is there to take them."""
    if not config.events.device_reports or not config.events.server_address:
        return None
    reports = DeviceReports(
        state=parts.state,
        present=parts.sources.vendors.present,
        gpu_interval_seconds=config.node_agent.gpu_interval_seconds,
        rdma_interval_seconds=config.node_agent.rdma_interval_seconds,
        put=stream.put_message,
        containers=tracking.containers if tracking is not None else None,
        metrics=ReportMetrics(process.metrics),
    )
    cycle.after_each(reports.after_cycle)
    stream.watch(reports.told)  # container ends with their exact times
    return reports


def _first_cycle(cycle: CollectionCycle) -> Callable[[], None]:
    def check() -> None:
        if cycle.cycles == 0:
            raise errors.NoDataError("no collection cycle has finished yet")

    return check


class _Closer:
    """Stops the collector threads with the service."""

    name = "collectors"

    def __init__(self, cycle: CollectionCycle) -> None:
        self._cycle = cycle

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        self._cycle.close()


def _describe(agent: NodeAgent) -> dict[str, object]:
    return {"node": agent.node_name, "vendors": sorted(agent.vendors.found())}


ROLE = Role(
    name="node-agent",
    starting="node agent starting",
    sections=("server", "host", "kubelet", "node_agent", "containers", "events"),
    build=build,
    describe=_describe,
)
