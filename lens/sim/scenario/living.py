"""A scenario's cluster living in (scaled) real time, for `lens demo`: the API emulator with the
player applying events as they fall due, and per node what a node agent on it reads — a host
tree whose GPUs the pods keep busy, a kubelet (HTTPS /pods and /stats/summary, and the
pod-resources socket naming each pod's GPUs) and a Docker stand-in running the pods'
containers (runtimes.py).

`LivingCluster` is a Service part: started, it serves the API with the scenario loaded, builds
the nodes' host sides, and then, every tick, applies the events due, tells each node's runtime
of the pods that began and ended, and brings the host trees' GPU readings up to date every
`TREE_STEP_SECONDS` of the cluster's time.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import math
import threading
from collections.abc import Callable
from pathlib import Path

from lens.runtime import lifecycle
from lens.runtime.clock import Clock
from lens.sim.hosts.tree import HostTree
from lens.sim.kube.server import KubeApiServer
from lens.sim.kubelet.server import KubeletServer
from lens.sim.scenario.player import ScenarioPlayer
from lens.sim.scenario.runtimes import Announcer, ScriptedRuntime
from lens.sim.scenario.spec import TIME_STEP_SECONDS, Scenario

# Loads change at whole minutes and pods come and go on the scenario's 15 s grid: readings
# rewritten on that grid are never staler than a step.
TREE_STEP_SECONDS = TIME_STEP_SECONDS
TICK_SECONDS = 0.2  # of real time, between two looks at the timeline
KUBELET_TOKEN = "lens-demo-kubelet"  # the simulated kubelets ask for it (on loopback)
CLOSE_WORKERS = 32
WATCH_HISTORY = 100_000  # events kept per resource type: watchers never fall behind it


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SimulatedHost:
    """One node's host side, as its node agent is configured to read it."""

    name: str
    tree: HostTree
    kubelet: KubeletServer
    kubelet_token_file: Path
    runtime: ScriptedRuntime

    @property
    def docker_socket(self) -> str:
        return self.runtime.docker.socket


class LivingCluster:
    """The cluster of `scenario` under `directory`, on `clock` (a ScaledClock runs it faster)."""

    name = "simulated-cluster"

    def __init__(
        self,
        scenario: Scenario,
        *,
        clock: Clock,
        directory: Path,
        on_failure: Callable[[BaseException], None],
    ) -> None:
        """`on_failure`: told when a step fails (the cluster then stands still)."""
        self.scenario = scenario
        self._on_failure = on_failure
        self._clock = clock
        self._directory = directory
        self.kube = KubeApiServer(clock=clock, history_size=WATCH_HISTORY)
        self.player = ScenarioPlayer(
            scenario, self.kube, clock=clock, hosts_dir=directory / "hosts"
        )
        self._announcer = Announcer(self.player.truth)
        self.hosts: dict[str, SimulatedHost] = {}
        self._tree_step = -1
        self._faults = sorted(scenario.gpu_faults, key=lambda fault: fault.at)  # not yet begun
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="simulated-cluster", daemon=True)
        self.loaded = threading.Event()

    @property
    def url(self) -> str:
        """The API emulator's address (it listens from construction)."""
        return self.kube.url

    def serve(self) -> None:
        """Serve the API with the scenario's nodes and what starts at once."""
        self.kube.start()
        self.player.load()

    def build_hosts(self) -> None:
        """Build every node's host tree, kubelet and runtime (a hundred nodes take seconds),
        unless stopped meanwhile; then tell the runtimes what runs."""
        (self._directory / "docker").mkdir(parents=True, exist_ok=True)
        token_file = self._directory / "kubelet-token"
        token_file.write_text(KUBELET_TOKEN)
        for index, name in enumerate(self.scenario.node_names):
            if self._stop.is_set():
                return
            kubelet = self.player.kubelet(
                name, self._directory / "kubelets" / str(index), token=KUBELET_TOKEN
            )
            runtime = ScriptedRuntime(self._directory / "docker" / f"{index}.sock")
            self.hosts[name] = SimulatedHost(
                name=name,
                tree=self.player.host_tree(name),
                kubelet=kubelet.start(),
                kubelet_token_file=token_file,
                runtime=runtime,
            )
        self.step()
        self.loaded.set()

    def load(self) -> None:
        """serve() and build_hosts(), for a caller that steps the cluster itself."""
        self.serve()
        self.build_hosts()

    def step(self) -> None:
        """Apply the events due, tell the runtimes, and rewrite readings on a new grid step."""
        self.player.run_until(self.player.elapsed)
        begun, ended = self._announcer.due(self._clock.time())
        for hold in begun:
            self.hosts[hold.node].runtime.started(hold)
        for hold in ended:
            self.hosts[hold.node].runtime.ended(hold)
        faulted = self._inject_faults()
        grid = math.floor(self._clock.time() / TREE_STEP_SECONDS)
        if grid != self._tree_step or begun or ended or faulted:
            self._tree_step = grid
            for host in self.hosts.values():
                host.tree.update_gpus()

    def _inject_faults(self) -> bool:
        """The scenario's GPU faults due by now, into their nodes' trees; whether any was."""
        due = [fault for fault in self._faults if fault.at <= self.player.elapsed]
        for fault in due:
            node = self.hosts[fault.node].tree.node
            if fault.kind == "uncorrectable_error":
                node.add_memory_errors(fault.gpu, uncorrectable=1)
            elif fault.kind == "thermal_throttle":
                node.throttle(fault.gpu, frozenset({"thermal_hbm"}))
            else:
                node.add_bad_pages(fault.gpu, pending=1)
        self._faults = self._faults[len(due) :]
        return bool(due)

    def _run(self) -> None:
        try:
            self.build_hosts()
            while not self._stop.wait(TICK_SECONDS):
                self.step()
        except Exception as exc:  # a simulator's bug: the process says so and stops
            self._on_failure(exc)

    async def start(self) -> None:
        """Serve the API now; build the hosts and play the scenario on a thread of their own
        (the roles watching the API start meanwhile; `loaded` is set once the hosts exist)."""
        await lifecycle.in_thread(self.serve, name="simulated-cluster-serve")
        self._thread.start()

    async def stop(self) -> None:
        self._stop.set()
        await lifecycle.in_thread(self._close, name="simulated-cluster-stop")

    def _close(self) -> None:
        if self._thread.is_alive():
            self._thread.join()
        # Side by side: each server waits a moment for its serving thread to notice.
        with concurrent.futures.ThreadPoolExecutor(max_workers=CLOSE_WORKERS) as pool:
            list(pool.map(_close_host, self.hosts.values()))
        self.kube.stop()


def _close_host(host: SimulatedHost) -> None:
    with contextlib.suppress(OSError):
        host.runtime.stop()
    with contextlib.suppress(OSError):
        host.kubelet.stop()
