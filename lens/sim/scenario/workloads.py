"""What the simulated controllers do for each workload kind: owner chains, pods, completions.

WorkloadRunner plays the Deployment, StatefulSet, Job, CronJob and training-operator
controllers plus the scheduler and kubelets, writing into the API emulator's store; player.py
calls it for each timeline event.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Callable
from typing import Any

from lens.runtime.clock import Clock
from lens.sim.kube.objects import timestamp
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests
from lens.sim.scenario.scheduling import Scheduler
from lens.sim.scenario.spec import NodeLoss, Workload

JsonObject = dict[str, Any]

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
CRONJOB_HISTORY = 3


@dataclasses.dataclass(slots=True)
class Cluster:
    """What every controller shares: the API server, the scheduler, time and the timeline."""

    kube: KubeApiServer
    scheduler: Scheduler
    clock: Clock
    schedule: Callable[[float, str, Any], None]
    start_time: float = 0.0
    node_addresses: dict[str, str] = dataclasses.field(default_factory=dict)
    resources: dict[str, str] = dataclasses.field(default_factory=dict)
    rng: random.Random = dataclasses.field(default_factory=lambda: random.Random(0))

    def __post_init__(self) -> None:
        self.start_time = self.clock.time()

    @property
    def elapsed(self) -> float:
        return self.clock.time() - self.start_time

    def now(self) -> str:
        return timestamp(self.clock.time())


@dataclasses.dataclass(slots=True)
class _PodRecord:
    namespace: str
    name: str
    template: JsonObject
    owners: list[JsonObject]
    labels: dict[str, str]
    gpus: int
    workload: str  # "<namespace>/<kind>/<name>" of the object whose completion ends the pod


class WorkloadRunner:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._pods: dict[str, _PodRecord] = {}  # "<namespace>/<name>" -> record
        self._cron_jobs: dict[str, list[str]] = {}

    @property
    def kube(self) -> KubeApiServer:
        return self.cluster.kube

    def _suffix(self) -> str:
        return "".join(self.cluster.rng.choice(_ALPHABET) for _ in range(5))

    def handle(self, kind: str, subject: Any) -> None:
        if kind == "start":
            self.start(subject)
        elif kind == "finish":
            self.finish(*subject)
        elif kind == "cron":
            self.cron_tick(subject)
        elif kind == "evict":
            self.evict(subject)

    # -- pods ------------------------------------------------------------------------------

    def _gpu_resource(self) -> str:
        return next(iter(self.cluster.resources.values()), "amd.com/gpu")

    def create_pod(self, record: _PodRecord) -> JsonObject:
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
            reason = f"0/{nodes} nodes are available: Insufficient {self._gpu_resource()}."
            status = manifests.pending_status(reason=reason, when=self.cluster.now())
            return self.kube.store.put_status(pods, record.namespace, record.name, status)
        pod_ip = self._pod_ip(node)
        status = manifests.running_status(
            created,
            started=self.cluster.now(),
            host_ip=self.cluster.node_addresses[node],
            pod_ip=pod_ip,
        )
        return self.kube.store.put_status(pods, record.namespace, record.name, status)

    def _pod_ip(self, node: str) -> str:
        index = list(self.cluster.node_addresses).index(node)
        return f"10.{(index // 256) % 256}.{index % 256}.{self.cluster.rng.randint(2, 254)}"

    def _finish_pod(self, key: str, *, failed: bool) -> None:
        record = self._pods.pop(key, None)
        if record is None:
            return
        self.cluster.scheduler.release(key)
        pods = self.kube.resource("v1", "Pod")
        current = self.kube.store.get(pods, record.namespace, record.name)
        status = current.get("status") or {}
        if status.get("phase") == "Running":
            finished = manifests.finished_status(status, failed=failed, finished=self.cluster.now())
            self.kube.store.put_status(pods, record.namespace, record.name, finished)

    def _forget_pod(self, key: str) -> None:
        if self._pods.pop(key, None) is not None:
            self.cluster.scheduler.release(key)

    def pods_of(self, workload: str) -> list[str]:
        return [key for key, record in self._pods.items() if record.workload == workload]

    # -- starting workloads ----------------------------------------------------------------

    def start(self, w: Workload) -> None:
        template = manifests.pod_template(
            w.name, gpus=w.gpus_per_pod, resource=self._gpu_resource()
        )
        starters = {
            "Deployment": self._deployment,
            "StatefulSet": self._statefulset,
            "Job": self._job,
            "CronJob": self._cronjob,
            "PyTorchJob": self._pytorchjob,
            "Pod": self._bare_pod,
        }
        starters[w.kind](w, template)
        if w.duration is not None and w.kind not in ("CronJob",):
            self.cluster.schedule(
                self.cluster.elapsed + w.duration, "finish", (w.namespace, w.kind, w.name, w.fails)
            )

    def _record(
        self,
        w: Workload,
        name: str,
        template: JsonObject,
        owner: JsonObject,
        labels: dict[str, str] | None = None,
        workload: str | None = None,
    ) -> _PodRecord:
        return _PodRecord(
            w.namespace,
            name,
            template,
            [manifests.owner(owner)],
            labels or {},
            w.gpus_per_pod,
            workload or f"{w.namespace}/{w.kind}/{w.name}",
        )

    def _deployment(self, w: Workload, template: JsonObject) -> None:
        spec = {
            "replicas": w.replicas,
            "selector": {"matchLabels": {"app": w.name}},
            "template": template,
        }
        deployment = self.kube.create(
            manifests.controller("Deployment", "apps/v1", w.name, w.namespace, spec),
            keep_status=False,
        )
        template_hash = hashlib.sha256(w.name.encode()).hexdigest()[:10]
        labels = {"pod-template-hash": template_hash}
        rs_name = f"{w.name}-{template_hash}"
        rs_template = {
            **template,
            "metadata": {"labels": {**template["metadata"]["labels"], **labels}},
        }
        rs_spec = {**spec, "template": rs_template}
        replicaset = self.kube.create(
            manifests.controller(
                "ReplicaSet",
                "apps/v1",
                rs_name,
                w.namespace,
                rs_spec,
                owners=[manifests.owner(deployment)],
                labels={"app": w.name, **labels},
            ),
            keep_status=False,
        )
        for _ in range(w.replicas):
            self.create_pod(
                self._record(w, f"{rs_name}-{self._suffix()}", rs_template, replicaset, labels)
            )
        self._set_replicas("ReplicaSet", "apps/v1", w.namespace, rs_name, w.replicas)
        self._set_replicas("Deployment", "apps/v1", w.namespace, w.name, w.replicas)

    def _set_replicas(
        self, kind: str, api_version: str, namespace: str, name: str, replicas: int
    ) -> None:
        status = {
            "replicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
            "observedGeneration": 1,
        }
        self.kube.store.put_status(self.kube.resource(api_version, kind), namespace, name, status)

    def _statefulset(self, w: Workload, template: JsonObject) -> None:
        spec = {
            "replicas": w.replicas,
            "serviceName": w.name,
            "selector": {"matchLabels": {"app": w.name}},
            "template": template,
        }
        statefulset = self.kube.create(
            manifests.controller("StatefulSet", "apps/v1", w.name, w.namespace, spec),
            keep_status=False,
        )
        for ordinal in range(w.replicas):
            name = f"{w.name}-{ordinal}"
            self.create_pod(
                self._record(
                    w, name, template, statefulset, {"statefulset.kubernetes.io/pod-name": name}
                )
            )
        self._set_replicas("StatefulSet", "apps/v1", w.namespace, w.name, w.replicas)

    def _job_object(
        self, w: Workload, name: str, template: JsonObject, owners: list[JsonObject] | None = None
    ) -> JsonObject:
        spec = {
            "parallelism": w.replicas,
            "completions": w.replicas,
            "backoffLimit": 6,
            "template": template,
        }
        job = self.kube.create(
            manifests.controller(
                "Job", "batch/v1", name, w.namespace, spec, owners=owners, labels={"job-name": name}
            ),
            keep_status=False,
        )
        workload = f"{w.namespace}/Job/{name}"
        for _ in range(w.replicas):
            labels = {"job-name": name, "batch.kubernetes.io/job-name": name}
            self.create_pod(
                self._record(w, f"{name}-{self._suffix()}", template, job, labels, workload)
            )
        status = {"active": w.replicas, "startTime": self.cluster.now(), "ready": w.replicas}
        return self.kube.store.put_status(
            self.kube.resource("batch/v1", "Job"), w.namespace, name, status
        )

    def _job(self, w: Workload, template: JsonObject) -> None:
        self._job_object(w, w.name, template)

    def _cronjob(self, w: Workload, template: JsonObject) -> None:
        minutes = max(1, int(w.schedule_every // 60))
        spec = {
            "schedule": f"*/{minutes} * * * *",
            "jobTemplate": {"spec": {"template": template}},
            "successfulJobsHistoryLimit": CRONJOB_HISTORY,
        }
        self.kube.create(
            manifests.controller("CronJob", "batch/v1", w.name, w.namespace, spec),
            keep_status=False,
        )
        self.cluster.schedule(self.cluster.elapsed, "cron", w)

    def cron_tick(self, w: Workload) -> None:
        cronjob = self.kube.store.get(
            self.kube.resource("batch/v1", "CronJob"), w.namespace, w.name
        )
        template = manifests.pod_template(
            w.name, gpus=w.gpus_per_pod, resource=self._gpu_resource()
        )
        name = f"{w.name}-{int(self.cluster.clock.time() // 60)}"
        self._job_object(w, name, template, owners=[manifests.owner(cronjob)])
        assert w.duration is not None
        self.cluster.schedule(
            self.cluster.elapsed + w.duration, "finish", (w.namespace, "Job", name, w.fails)
        )
        self.cluster.schedule(self.cluster.elapsed + w.schedule_every, "cron", w)
        history = self._cron_jobs.setdefault(f"{w.namespace}/{w.name}", [])
        history.append(name)
        while len(history) > CRONJOB_HISTORY:
            self._delete_job(w.namespace, history.pop(0))
        status = {
            "lastScheduleTime": self.cluster.now(),
            "active": [
                {"kind": "Job", "name": name, "namespace": w.namespace, "apiVersion": "batch/v1"}
            ],
        }
        self.kube.store.put_status(
            self.kube.resource("batch/v1", "CronJob"), w.namespace, w.name, status
        )

    def _delete_job(self, namespace: str, name: str) -> None:
        for key in self.pods_of(f"{namespace}/Job/{name}"):
            self._forget_pod(key)
        self.kube.store.delete(
            self.kube.resource("batch/v1", "Job"), namespace, name, propagation="Background"
        )

    def _pytorchjob(self, w: Workload, template: JsonObject) -> None:
        workers = w.replicas - 1
        replica_specs: JsonObject = {
            "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": template}
        }
        if workers:
            replica_specs["Worker"] = {
                "replicas": workers,
                "restartPolicy": "OnFailure",
                "template": template,
            }
        body = manifests.controller(
            "PyTorchJob",
            "kubeflow.org/v1",
            w.name,
            w.namespace,
            {"pytorchReplicaSpecs": replica_specs},
        )
        job = self.kube.create(body, keep_status=False)
        roles = [("master", 0)] + [("worker", i) for i in range(workers)]
        for role, index in roles:
            labels = {
                "training.kubeflow.org/job-name": w.name,
                "training.kubeflow.org/replica-type": role,
                "training.kubeflow.org/replica-index": str(index),
            }
            self.create_pod(self._record(w, f"{w.name}-{role}-{index}", template, job, labels))
        conditions = [
            {
                "type": "Created",
                "status": "True",
                "reason": "PyTorchJobCreated",
                "lastTransitionTime": self.cluster.now(),
            },
            {
                "type": "Running",
                "status": "True",
                "reason": "PyTorchJobRunning",
                "lastTransitionTime": self.cluster.now(),
            },
        ]
        self.kube.store.put_status(
            self.kube.resource("kubeflow.org/v1", "PyTorchJob"),
            w.namespace,
            w.name,
            {"conditions": conditions, "startTime": self.cluster.now()},
        )

    def _bare_pod(self, w: Workload, template: JsonObject) -> None:
        self.create_pod(
            _PodRecord(
                w.namespace, w.name, template, [], {}, w.gpus_per_pod, f"{w.namespace}/Pod/{w.name}"
            )
        )

    # -- finishing -------------------------------------------------------------------------

    def finish(self, namespace: str, kind: str, name: str, failed: bool) -> None:
        workload = f"{namespace}/{kind}/{name}"
        if kind in ("Deployment", "StatefulSet"):
            for key in self.pods_of(workload):
                self._forget_pod(key)
            self.kube.store.delete(self.kube.resource("apps/v1", kind), namespace, name)
            return
        pods = self.pods_of(workload)
        for key in pods:
            self._finish_pod(key, failed=failed)
        if kind == "Job":
            self._complete_job(namespace, name, len(pods), failed)
        elif kind == "PyTorchJob":
            condition = {
                "type": "Failed" if failed else "Succeeded",
                "status": "True",
                "lastTransitionTime": self.cluster.now(),
            }
            api = self.kube.resource("kubeflow.org/v1", "PyTorchJob")
            current = self.kube.store.get(api, namespace, name).get("status") or {}
            conditions = [
                {**c, "status": "False"} if c["type"] == "Running" else c
                for c in current.get("conditions", [])
            ]
            self.kube.store.put_status(
                api,
                namespace,
                name,
                {
                    **current,
                    "conditions": [*conditions, condition],
                    "completionTime": self.cluster.now(),
                },
            )

    def _complete_job(self, namespace: str, name: str, pods: int, failed: bool) -> None:
        api = self.kube.resource("batch/v1", "Job")
        current = self.kube.store.get(api, namespace, name).get("status") or {}
        condition = {
            "type": "Failed" if failed else "Complete",
            "status": "True",
            "lastTransitionTime": self.cluster.now(),
        }
        counts = (
            {"failed": pods}
            if failed
            else {"succeeded": pods, "completionTime": self.cluster.now()}
        )
        status = {
            **{k: v for k, v in current.items() if k not in ("active", "ready")},
            **counts,
            "conditions": [condition],
        }
        self.kube.store.put_status(api, namespace, name, status)

    # -- node loss -------------------------------------------------------------------------

    def lose_node(self, loss: NodeLoss) -> None:
        nodes = self.kube.resource("v1", "Node")
        current = self.kube.store.get(nodes, None, loss.node)
        status = current.get("status") or {}
        conditions = [manifests.ready_condition(False, when=self.cluster.now())]
        self.kube.store.put_status(nodes, None, loss.node, {**status, "conditions": conditions})
        self.cluster.scheduler.node_down(loss.node)
        self.cluster.schedule(self.cluster.elapsed + loss.eviction_delay, "evict", loss.node)

    def evict(self, node: str) -> None:
        """The taint manager deletes the lost node's pods; controllers replace theirs elsewhere."""
        pods = self.kube.resource("v1", "Pod")
        for key in self.cluster.scheduler.pods_on(node):
            record = self._pods.get(key)
            self._forget_pod(key)
            if record is None:
                continue
            self.kube.store.delete(pods, record.namespace, record.name, propagation="Background")
            if record.owners:
                kind = record.owners[0]["kind"]
                name = record.name if kind == "StatefulSet" else self._replacement_name(record)
                self.create_pod(dataclasses.replace(record, name=name))

    def _replacement_name(self, record: _PodRecord) -> str:
        if record.labels.get("training.kubeflow.org/replica-type"):
            return record.name  # the training operator recreates the pod under the same name
        return f"{record.name.rsplit('-', 1)[0]}-{self._suffix()}"
