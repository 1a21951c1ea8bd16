"""ScenarioPlayer: load a Scenario into the API emulator and replay its timeline, as the cluster's
controllers, scheduler and kubelets would (workloads.py, pods.py), recording what it enacted in
`truth` (truth.py). With a FakeClock `run_until()` jumps from event to event, faster than real
time. Host trees and kubelets are built for the nodes that ask for them; their GPUs are as busy as
the pods holding them make them.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lens.runtime.clock import Clock, FakeClock
from lens.sim.hosts import state
from lens.sim.hosts.models import MODELS
from lens.sim.hosts.profiles import Profile
from lens.sim.hosts.state import GpuIdentity, NodeSpec
from lens.sim.hosts.tree import HostTree
from lens.sim.kube.selectors import FieldSelector, LabelSelector
from lens.sim.kube.server import KubeApiServer
from lens.sim.kube.status import ApiError
from lens.sim.kubelet.server import KubeletServer, inventory_from_tree
from lens.sim.scenario import kubelets, loads, manifests
from lens.sim.scenario.pods import Cluster
from lens.sim.scenario.scheduling import Scheduler
from lens.sim.scenario.spec import TEAM_LABEL, NodeGroup, Scenario
from lens.sim.scenario.truth import Truth
from lens.sim.scenario.workloads import WorkloadRunner

log = logging.getLogger(__name__)

JsonObject = dict[str, Any]


@dataclasses.dataclass(order=True, frozen=True, slots=True)
class _Event:
    at: float
    sequence: int
    kind: str = dataclasses.field(compare=False)
    subject: Any = dataclasses.field(compare=False)


class ScenarioPlayer:
    """Plays one Scenario against one KubeApiServer."""

    def __init__(
        self,
        scenario: Scenario,
        kube: KubeApiServer,
        *,
        clock: Clock,
        hosts_dir: Path | None = None,
        start_time: float | None = None,
    ) -> None:
        """`start_time`: when the scenario's time 0 is (default: the clock's now); a later one
        lets a test start what watches the cluster before anything happens in it."""
        self.scenario = scenario
        self.kube = kube
        self._clock = clock
        self._hosts_dir = hosts_dir
        self._timeline: list[_Event] = []
        self._sequence = itertools.count()
        self._groups: dict[str, NodeGroup] = {}
        self._trees: dict[str, HostTree] = {}
        self.start_time = clock.time() if start_time is None else start_time
        capacity = {}
        for group in scenario.nodes:
            for index in range(group.count):
                name = f"{group.prefix}-{index:04d}"
                self._groups[name] = group
                capacity[name] = group.gpus
        self.scheduler = Scheduler(capacity)
        self.truth = Truth(capacity, loads.workload_loads(scenario, origin=self.start_time))
        self.cluster = Cluster(
            kube=kube,
            scheduler=self.scheduler,
            clock=clock,
            schedule=self._schedule,
            truth=self.truth,
            start_time=self.start_time,
            teams=dict(scenario.teams),
        )
        self._runner = WorkloadRunner(self.cluster)

    # -- setting up ------------------------------------------------------------------------

    def load(self) -> ScenarioPlayer:
        """Create the nodes and everything that starts at time 0."""
        self.kube.create(manifests.PYTORCHJOB_CRD)
        for namespace in sorted({w.namespace for w in self.scenario.workloads} - {"default"}):
            team = self.scenario.team_of(namespace)
            labels = {TEAM_LABEL: team} if team else None
            self.kube.create(manifests.namespace(namespace, labels=labels))
        for index, (name, group) in enumerate(self._groups.items()):
            address = f"192.168.{index // 250}.{index % 250 + 1}"
            self.kube.create(
                manifests.node(name, model=group.model, gpus=group.gpus, address=address)
            )
            self.cluster.node_addresses[name] = address
            self.cluster.resources[name] = manifests.RESOURCE[MODELS[group.model].vendor]
        for workload in self.scenario.workloads:
            self._schedule(workload.start, "start", workload)
        for loss in self.scenario.node_losses:
            self._schedule(loss.at, "node-lost", loss)
        self.run_until(0.0)
        return self

    def _schedule(self, at: float, kind: str, subject: Any) -> None:
        heapq.heappush(self._timeline, _Event(at, next(self._sequence), kind, subject))

    # -- playing ---------------------------------------------------------------------------

    @property
    def elapsed(self) -> float:
        return self._clock.time() - self.start_time

    def next_event(self) -> float | None:
        return self._timeline[0].at if self._timeline else None

    def run_until(self, at: float) -> int:
        """Apply every event due by `at` seconds after the start; returns how many.

        With a FakeClock the clock is moved to each event's time first, so objects carry the
        times the events happened at; with a real clock only events already due are applied.
        """
        done = 0
        while self._timeline and self._timeline[0].at <= at:
            event = heapq.heappop(self._timeline)
            if isinstance(self._clock, FakeClock):
                behind = self.start_time + event.at - self._clock.time()
                if behind > 0:
                    self._clock.advance(behind)
            elif self.start_time + event.at > self._clock.time():
                heapq.heappush(self._timeline, event)
                break
            self._apply(event)
            done += 1
        if isinstance(self._clock, FakeClock) and self.start_time + at > self._clock.time():
            self._clock.advance(self.start_time + at - self._clock.time())
        return done

    def _apply(self, event: _Event) -> None:
        try:
            if event.kind == "node-lost":
                self._runner.lose_node(event.subject)
            else:
                self._runner.handle(event.kind, event.subject)
        except ApiError:
            log.warning(
                "scenario event could not be applied", extra={"event": event.kind}, exc_info=True
            )

    # -- nodes' host side ------------------------------------------------------------------

    def node_spec(self, node: str) -> NodeSpec:
        group = self._groups[node]
        return NodeSpec(
            name=node,
            model=group.model,
            gpus=group.gpus,
            rdma=group.rdma,
            compute_partition=group.compute_partition,
            seed=self.scenario.seed,
        )

    def gpus(self, node: str) -> tuple[GpuIdentity, ...]:
        """The GPUs of `node`'s host tree, by index (the truth's holds name them by index)."""
        return state.gpu_identities(self.node_spec(node))

    def host_tree(self, node: str) -> HostTree:
        """The host tree of `node`, built on first use under hosts_dir; each GPU's load is the
        one the pod holding it gives it (idle while none does)."""
        if node not in self._trees:
            if self._hosts_dir is None:
                raise ValueError("this player was made without a hosts_dir")
            spec = self.node_spec(node)
            load: list[Profile] = [self.truth.gpu_profile(node, i) for i in range(spec.gpus)]
            self._trees[node] = HostTree(
                self._hosts_dir / node, spec, clock=self._clock, device_profiles=load or None
            ).build()
        return self._trees[node]

    def kubelet(
        self, node: str, directory: Path, *, token: str = "sim-kubelet-token"
    ) -> KubeletServer:
        """A kubelet for `node` whose devices are the GPUs of its host tree (not started)."""
        tree = self.host_tree(node)
        inventory = inventory_from_tree(tree.node.gpus, self.cluster.resources[node])
        kubelet = KubeletServer(
            self.kube.store,
            node,
            directory=directory,
            token=token,
            inventory=inventory,
            clock=self._clock,
        )
        # Its device plugin gives each pod the GPUs the scheduler chose (the truth's).
        kubelet.allocator = kubelets.TruthAllocator(inventory, truth=self.truth, node=node)
        return kubelet

    def pod_phases(self) -> dict[str, int]:
        pods, _ = self.kube.store.select(
            self.kube.resource("v1", "Pod"), None, LabelSelector(), FieldSelector()
        )
        phases: dict[str, int] = {}
        for pod in pods:
            phase = (pod.get("status") or {}).get("phase", "Unknown")
            phases[phase] = phases.get(phase, 0) + 1
        return phases

    def nodes_with_pods(self) -> Sequence[str]:
        return [n for n in self._groups if self.scheduler.pods_on(n)]
