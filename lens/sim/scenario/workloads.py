"""What the simulated controllers do for each workload kind: owner chains, pods, completions.

WorkloadRunner plays the Deployment, StatefulSet, Job, CronJob and training-operator
controllers, writing into the API emulator's store; pods.py places and runs their pods (and
records what they hold in the truth); player.py calls it for each timeline event.
"""

from __future__ import annotations

import hashlib
from typing import Any

from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import manifests
from lens.sim.scenario.pods import Cluster, PodRecord, Pods, workload_ref
from lens.sim.scenario.spec import NodeLoss, Workload

JsonObject = dict[str, Any]

CRONJOB_HISTORY = 3


class WorkloadRunner:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.pods = Pods(cluster)
        self._cron_jobs: dict[str, list[str]] = {}

    @property
    def kube(self) -> KubeApiServer:
        return self.cluster.kube

    def handle(self, kind: str, subject: Any) -> None:
        if kind == "start":
            self.start(subject)
        elif kind == "finish":
            self.finish(*subject)
        elif kind == "cron":
            self.cron_tick(subject)
        elif kind == "evict":
            self.pods.evict(subject)

    # -- starting workloads ----------------------------------------------------------------

    def start(self, w: Workload) -> None:
        template = manifests.pod_template(
            w.name, gpus=w.gpus_per_pod, resource=self.pods.gpu_resource()
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
        *,
        top: JsonObject | None = None,
    ) -> PodRecord:
        """A pod owned by `owner`, whose top-level workload is `top` (default: the owner)."""
        return PodRecord(
            w.namespace,
            name,
            template,
            [manifests.owner(owner)],
            labels or {},
            w.gpus_per_pod,
            workload or f"{w.namespace}/{w.kind}/{w.name}",
            workload_ref(top or owner),
        )

    def _deployment(self, w: Workload, template: JsonObject) -> None:
        spec = {
            "replicas": w.replicas,
            "selector": {"matchLabels": {"app": w.name}},
            "template": template,
        }
        deployment = self.kube.create(
            manifests.controller(
                "Deployment", "apps/v1", w.name, w.namespace, spec, labels=self._top(w)
            ),
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
            name = f"{rs_name}-{self.cluster.suffix()}"
            self.pods.create(self._record(w, name, rs_template, replicaset, labels, top=deployment))
        self._set_replicas("ReplicaSet", "apps/v1", w.namespace, rs_name, w.replicas)
        self._set_replicas("Deployment", "apps/v1", w.namespace, w.name, w.replicas)

    def _top(self, w: Workload) -> dict[str, str]:
        """The labels of `w`'s top-level object: its name's, and its namespace's team."""
        return self.cluster.top_labels(w.namespace, {"app": w.name})

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
            manifests.controller(
                "StatefulSet", "apps/v1", w.name, w.namespace, spec, labels=self._top(w)
            ),
            keep_status=False,
        )
        for ordinal in range(w.replicas):
            name = f"{w.name}-{ordinal}"
            self.pods.create(
                self._record(
                    w, name, template, statefulset, {"statefulset.kubernetes.io/pod-name": name}
                )
            )
        self._set_replicas("StatefulSet", "apps/v1", w.namespace, w.name, w.replicas)

    def _job_object(
        self,
        w: Workload,
        name: str,
        template: JsonObject,
        owner: JsonObject | None = None,
    ) -> JsonObject:
        """A Job and its pods; `owner`: the CronJob that made it, their top-level workload."""
        owners = [manifests.owner(owner)] if owner is not None else None
        labels = {"job-name": name}
        if owner is None:  # the top-level workload itself, not a CronJob's
            labels = self.cluster.top_labels(w.namespace, labels)
        spec = {
            "parallelism": w.replicas,
            "completions": w.replicas,
            "backoffLimit": 6,
            "template": template,
        }
        job = self.kube.create(
            manifests.controller(
                "Job", "batch/v1", name, w.namespace, spec, owners=owners, labels=labels
            ),
            keep_status=False,
        )
        workload = f"{w.namespace}/Job/{name}"
        for _ in range(w.replicas):
            labels = {"job-name": name, "batch.kubernetes.io/job-name": name}
            pod = f"{name}-{self.cluster.suffix()}"
            self.pods.create(self._record(w, pod, template, job, labels, workload, top=owner))
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
            manifests.controller(
                "CronJob", "batch/v1", w.name, w.namespace, spec, labels=self._top(w)
            ),
            keep_status=False,
        )
        self.cluster.schedule(self.cluster.elapsed, "cron", w)

    def cron_tick(self, w: Workload) -> None:
        cronjob = self.kube.store.get(
            self.kube.resource("batch/v1", "CronJob"), w.namespace, w.name
        )
        template = manifests.pod_template(
            w.name, gpus=w.gpus_per_pod, resource=self.pods.gpu_resource()
        )
        name = f"{w.name}-{int(self.cluster.clock.time() // 60)}"
        self._job_object(w, name, template, owner=cronjob)
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
        for key in self.pods.of(f"{namespace}/Job/{name}"):
            self.pods.forget(key)
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
            labels=self._top(w),
        )
        job = self.kube.create(body, keep_status=False)
        roles = [("master", 0)] + [("worker", i) for i in range(workers)]
        for role, index in roles:
            labels = {
                "training.kubeflow.org/job-name": w.name,
                "training.kubeflow.org/replica-type": role,
                "training.kubeflow.org/replica-index": str(index),
            }
            self.pods.create(self._record(w, f"{w.name}-{role}-{index}", template, job, labels))
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
        self.pods.create(
            PodRecord(
                w.namespace, w.name, template, [], {}, w.gpus_per_pod, f"{w.namespace}/Pod/{w.name}"
            )
        )

    # -- finishing -------------------------------------------------------------------------

    def finish(self, namespace: str, kind: str, name: str, failed: bool) -> None:
        workload = f"{namespace}/{kind}/{name}"
        if kind in ("Deployment", "StatefulSet"):
            for key in self.pods.of(workload):
                self.pods.forget(key)
            self.kube.store.delete(self.kube.resource("apps/v1", kind), namespace, name)
            return
        pods = self.pods.of(workload)
        for key in pods:
            self.pods.finish(key, failed=failed)
        if kind == "Job":
            self._complete_job(namespace, name, len(pods), failed)
        elif kind == "PyTorchJob":
            # The training operator's condition: reason <Kind>Failed or <Kind>Succeeded.
            condition = {
                "type": "Failed" if failed else "Succeeded",
                "status": "True",
                "reason": "PyTorchJobFailed" if failed else "PyTorchJobSucceeded",
                "message": f"PyTorchJob {namespace}/{name} "
                + ("has failed because a replica failed." if failed else "successfully completed."),
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
        # The Job controller's own wording (the backoff limit is the scenario's 0 retries).
        condition = {
            "type": "Failed" if failed else "Complete",
            "status": "True",
            "lastTransitionTime": self.cluster.now(),
            **(
                {
                    "reason": "BackoffLimitExceeded",
                    "message": "Job has reached the specified backoff limit",
                }
                if failed
                else {}
            ),
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
        self.pods.lose_node(loss)
