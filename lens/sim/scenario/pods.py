"""A simulated cluster's pods: placed by the scheduler on GPUs, bound, started, finished, lost
with their node — each hold of GPUs recorded in the scenario's truth (truth.py) as it happens.

workloads.py creates pods for its workloads through `Pods`; player.py owns the Cluster they
share and calls `lose_node` and `evict` from its timeline.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

from lens.runtime.clock import Clock
from lens.sim.kube.objects import timestamp
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests
from lens.sim.scenario.scheduling import Scheduler
from lens.sim.scenario.spec import TEAM_LABEL, NodeLoss
from lens.sim.scenario.truth import DELETED, FAILED, FINISHED, Truth, WorkloadRef

JsonObject = dict[str, Any]

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


@dataclasses.dataclass(slots=True)
class Cluster:
    """What every controller shares: the API server, the scheduler, time, the timeline and the
    truth being recorded."""

    kube: KubeApiServer
    scheduler: Scheduler
    clock: Clock
    schedule: Callable[[float, str, Any], None]
    truth: Truth
    start_time: float | None = None  # the scenario's time 0 (default: the clock's now)
    node_addresses: dict[str, str] = dataclasses.field(default_factory=dict)
    resources: dict[str, str] = dataclasses.field(default_factory=dict)
    rng: random.Random = dataclasses.field(default_factory=lambda: random.Random(0))
    teams: dict[str, str] = dataclasses.field(default_factory=dict)  # namespace -> its team

    def top_labels(self, namespace: str, labels: dict[str, str]) -> dict[str, str]:
        """`labels` of a top-level workload in `namespace`, with its team's label."""
        team = self.teams.get(namespace, "")
        return {**labels, TEAM_LABEL: team} if team else labels

    def __post_init__(self) -> None:
        if self.start_time is None:
            self.start_time = self.clock.time()

    @property
    def elapsed(self) -> float:
        assert self.start_time is not None
        return self.clock.time() - self.start_time

    def now(self) -> str:
        return timestamp(self.clock.time())

    def suffix(self) -> str:
        return "".join(self.rng.choice(_ALPHABET) for _ in range(5))


def workload_ref(obj: JsonObject) -> WorkloadRef:
    """The top-level workload an object of the API server is, with its team label."""
    meta = obj["metadata"]
    return WorkloadRef(
        kind=obj["kind"],
        name=meta["name"],
        namespace=meta.get("namespace", ""),
        uid=meta["uid"],
        team=meta.get("labels", {}).get(TEAM_LABEL, ""),
    )


@dataclasses.dataclass(slots=True)
class PodRecord:
    namespace: str
    name: str
    template: JsonObject
    owners: list[JsonObject]
    labels: dict[str, str]
    gpus: int
    workload: str  # "<namespace>/<kind>/<name>" of the object whose completion ends the pod
    top: WorkloadRef | None = None  # its top-level workload; None: the pod has no owner


class Pods:
    """The pods the simulated controllers made, as the scheduler and kubelets run them."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._pods: dict[str, PodRecord] = {}  # "<namespace>/<name>" -> record

    @property
    def kube(self) -> KubeApiServer:
        return self.cluster.kube

    def gpu_resource(self) -> str:
        return next(iter(self.cluster.resources.values()), "amd.com/gpu")

    def create(self, record: PodRecord) -> JsonObject:
        key = f"{record.namespace}/{record.name}"
        node = self.cluster.scheduler.place(key, record.gpus)
        body = manifests.pod(
            record.name,
            record.namespace,
            record.template,
            owners=record.owners,
            node_name=node,
            labels=record.labels,
        )
        created = self.kube.create(body, keep_status=False)
        self._pods[key] = record
        pods = self.kube.resource("v1", "Pod")
        if node is None:
            nodes = len(self.cluster.node_addresses)
            reason = f"0/{nodes} nodes are available: Insufficient {self.gpu_resource()}."
            status = manifests.pending_status(reason=reason, when=self.cluster.now())
            return self.kube.store.put_status(pods, record.namespace, record.name, status)
        self._bind(record, created, node, self.cluster.scheduler.gpus_of(key))
        status = manifests.running_status(
            created,
            started=self.cluster.now(),
            host_ip=self.cluster.node_addresses[node],
            pod_ip=self._pod_ip(node),
        )
        return self.kube.store.put_status(pods, record.namespace, record.name, status)

    def _bind(
        self, record: PodRecord, created: JsonObject, node: str, gpus: tuple[int, ...]
    ) -> None:
        uid = created["metadata"]["uid"]
        top = record.top or WorkloadRef(
            kind="Pod", name=record.name, namespace=record.namespace, uid=uid
        )
        self.cluster.truth.bind(
            pod_uid=uid,
            namespace=record.namespace,
            pod_name=record.name,
            workload=top,
            node=node,
            gpus=gpus,
            at=self.cluster.clock.time(),
        )

    def _pod_ip(self, node: str) -> str:
        index = list(self.cluster.node_addresses).index(node)
        return f"10.{(index // 256) % 256}.{index % 256}.{self.cluster.rng.randint(2, 254)}"

    def finish(self, key: str, *, failed: bool) -> None:
        """The pod's containers ended: Succeeded (or Failed), its GPUs free."""
        record = self._pods.pop(key, None)
        if record is None:
            return
        self.cluster.scheduler.release(key)
        self.cluster.truth.end(
            record.namespace,
            record.name,
            at=self.cluster.clock.time(),
            how=FAILED if failed else FINISHED,
        )
        pods = self.kube.resource("v1", "Pod")
        current = self.kube.store.get(pods, record.namespace, record.name)
        status = current.get("status") or {}
        if status.get("phase") == "Running":
            finished = manifests.finished_status(status, failed=failed, finished=self.cluster.now())
            self.kube.store.put_status(pods, record.namespace, record.name, finished)

    def forget(self, key: str) -> PodRecord | None:
        """The pod is gone (deleted with its owner, or evicted): its GPUs free."""
        record = self._pods.pop(key, None)
        if record is not None:
            self.cluster.scheduler.release(key)
            at = self.cluster.clock.time()
            self.cluster.truth.end(record.namespace, record.name, at=at, how=DELETED)
        return record

    def of(self, workload: str) -> list[str]:
        return [key for key, record in self._pods.items() if record.workload == workload]

    # -- node loss -------------------------------------------------------------------------

    def lose_node(self, loss: NodeLoss) -> None:
        nodes = self.kube.resource("v1", "Node")
        current = self.kube.store.get(nodes, None, loss.node)
        status = current.get("status") or {}
        conditions = [manifests.ready_condition(False, when=self.cluster.now())]
        self.kube.store.put_status(nodes, None, loss.node, {**status, "conditions": conditions})
        self.cluster.scheduler.node_down(loss.node)
        self.cluster.truth.lose_node(loss.node, at=self.cluster.clock.time())
        self.cluster.schedule(self.cluster.elapsed + loss.eviction_delay, "evict", loss.node)

    def evict(self, node: str) -> None:
        """The taint manager deletes the lost node's pods; controllers replace theirs elsewhere."""
        pods = self.kube.resource("v1", "Pod")
        for key in self.cluster.scheduler.pods_on(node):
            record = self.forget(key)
            if record is None:
                continue
            self.kube.store.delete(pods, record.namespace, record.name, propagation="Background")
            if record.owners:
                kind = record.owners[0]["kind"]
                name = record.name if kind == "StatefulSet" else self._replacement_name(record)
                self.create(dataclasses.replace(record, name=name))

    def _replacement_name(self, record: PodRecord) -> str:
        if record.labels.get("training.kubeflow.org/replica-type"):
            return record.name  # the training operator recreates the pod under the same name
        return f"{record.name.rsplit('-', 1)[0]}-{self.cluster.suffix()}"
