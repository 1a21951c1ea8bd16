"""`lens node-agent`: wires the device and kubelet collectors, the cycle, REST and /metrics.

`build()` assembles the agent (tests drive it with a fake clock, host tree and NVML); `run()` is
what the CLI calls. Before the first cycle, vendors are detected and static facts read once, so
the first scrape already carries the final identity labels.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import socket
from collections.abc import Callable

from lens.devices import nvml as nvml_boundary
from lens.devices.nvml import Nvml
from lens.devices.statics import StaticFactsSource
from lens.devices.sysfs import HostFiles
from lens.devices.tools import ToolRunner
from lens.kube.kubelet import KubeletClient
from lens.roles.node_agent import collectors, rest
from lens.roles.node_agent.cycle import CollectionCycle, CollectorMetrics
from lens.roles.node_agent.state import AgentState
from lens.roles.node_agent.tracking import ContainerTracking, DeviceTable
from lens.runtime import errors, httpserver, kit, settings
from lens.runtime.clock import Clock
from lens.runtime.config import Config
from lens.runtime.periodic import Loop

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeAgent:
    kit: kit.RoleKit
    cycle: CollectionCycle
    state: AgentState
    statics: StaticFactsSource
    vendors: collectors.VendorPresence
    node_name: str
    tracking: ContainerTracking | None


class _LazyNvml:
    """NVML loaded on first use, so nodes without NVIDIA GPUs never import it."""

    def __init__(self, binding: object | None) -> None:
        self._binding = binding
        self._nvml: Nvml | None = None

    def __call__(self) -> Nvml:
        if self._nvml is None:
            self._nvml = Nvml(self._binding or nvml_boundary.load_binding())
        return self._nvml


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
    host = HostFiles(config.host.root)
    tools = ToolRunner(
        prefix=config.host.tool_prefix,
        timeout_seconds=config.host.tool_timeout_seconds,
        root=config.host.root,
    )
    statics = StaticFactsSource(
        host,
        tools,
        amd_smi=config.host.amd_smi,
        rocm_smi=config.host.rocm_smi,
        wall_time=clock.time,
    )
    # Built now, so a bad CA file fails the start rather than every cycle.
    kubelet = KubeletClient(config.kubelet) if config.kubelet.url else None

    def kubelet_client() -> KubeletClient:
        if kubelet is None:
            raise errors.NoDataError("no kubelet URL configured (kubelet.url)")
        return kubelet

    return collectors.AgentParts(
        config=config.node_agent,
        host_config=config.host,
        host=host,
        state=AgentState(clock.time),
        statics=statics,
        vendors=collectors.VendorPresence(host),
        tools=tools,
        nvml=_LazyNvml(nvml_binding),
        kubelet=kubelet_client,
    )


def _nvidia_driver(state: AgentState) -> Callable[[], str | None]:
    def version() -> str | None:
        observed = state.gpus["nvidia"].get()
        if observed is None:
            return None
        return next(
            (g.static.driver_version for g in observed.value.gpus if g.static is not None), None
        )

    return version


def build(
    config: Config,
    *,
    clock: Clock | None = None,
    nvml_binding: object | None = None,
    rng: random.Random | None = None,
    handle_signals: bool = True,
) -> NodeAgent:
    """The assembled agent; vendors detected and static facts read once already."""
    role = kit.build(
        "node-agent",
        server=config.server,
        service=config.service,
        clock=clock,
        rng=rng,
        handle_signals=handle_signals,
    )
    collectors.check_families()
    enabled = _enabled(config)  # before any tool runs: a typo fails the start at once
    parts = _parts(config, role.clock, nvml_binding)
    refresh = _refresher(parts)
    refresh()
    cycle = CollectionCycle(
        collectors.bindings(parts, enabled),
        clock=role.clock,
        metrics=CollectorMetrics(role.metrics),
        publish=role.publisher.publish,
    )
    role.publisher.add_text(cycle)
    role.loops.add(Loop(name="collect", interval_seconds=cycle.tick_seconds, run=cycle.run))
    role.loops.add(
        Loop(
            name="statics",
            interval_seconds=config.node_agent.static_refresh_seconds,
            run=refresh,
            run_at_start=False,
            stall_seconds=3 * config.host.tool_timeout_seconds + 60,
        )
    )
    node_name = config.node_agent.node_name or socket.gethostname()
    tracking = _tracking(config, parts, role, cycle, node_name)
    _serve_api(role, parts, tracking)
    role.http.add_route("/v1/metrics", httpserver.ops_routes(role.health, role.cache)["/metrics"])
    role.health.add_readiness("collection", _first_cycle(cycle))
    role.service.add(_Closer(cycle))
    return NodeAgent(
        kit=role,
        cycle=cycle,
        state=parts.state,
        statics=parts.statics,
        vendors=parts.vendors,
        node_name=node_name,
        tracking=tracking,
    )


def _serve_api(
    role: kit.RoleKit, parts: collectors.AgentParts, tracking: ContainerTracking | None
) -> None:
    api = rest.NodeApi(
        parts.state,
        statics=parts.statics.current,
        nvidia_driver=_nvidia_driver(parts.state),
        containers=tracking.containers if tracking is not None else None,
    )
    for path, handler in api.routes().items():
        role.http.add_route(path, handler)


def _tracking(
    config: Config,
    parts: collectors.AgentParts,
    role: kit.RoleKit,
    cycle: CollectionCycle,
    node_name: str,
) -> ContainerTracking | None:
    """Container tracking, started after the first cycle; None when no runtime is set."""
    if not config.containers.containerd_address and not config.containers.docker_address:
        log.info("container tracking off: no containerd_address or docker_address")
        return None
    tracking = ContainerTracking(
        containers=config.containers,
        events=config.events,
        node=node_name,
        host_root=config.host.root,
        lookup=DeviceTable(parts.host, parts.state),
        metrics=role.metrics,
        ready=lambda: cycle.cycles > 0,
        wall_time=role.clock.time,
    )
    role.service.add(tracking)
    role.health.add_readiness("containers", tracking.check_subscribed)
    role.loops.add(
        Loop(
            name="containers",
            interval_seconds=config.containers.reconcile_interval_seconds,
            run=tracking.reconcile,
            run_at_start=False,
        )
    )
    return tracking


def _refresher(parts: collectors.AgentParts) -> Callable[[], None]:
    def refresh() -> None:
        try:
            found = parts.vendors.refresh()
            inventory = parts.statics.refresh()
        except errors.LensError as exc:
            # sysfs itself unreadable: the collectors will say so; keep the last facts.
            log.warning("static facts not refreshed", extra={"reason": str(exc)})
            return
        log.debug(
            "static facts refreshed",
            extra={
                "vendors": sorted(found),
                "source": inventory.source,
                "gpus": len(inventory.facts),
            },
        )

    return refresh


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


def run(config: Config) -> int:
    """`lens node-agent`: run until SIGTERM; the exit code of the service."""
    agent = build(config)
    log.info(
        "node agent starting",
        extra={
            "node": agent.node_name,
            "vendors": [v for v in ("amd", "nvidia") if agent.vendors.present(v)],
            "config": {
                section: settings.to_plain(getattr(config, section))
                for section in ("server", "host", "kubelet", "node_agent", "containers", "events")
            },
        },
    )
    return agent.kit.service.run()
