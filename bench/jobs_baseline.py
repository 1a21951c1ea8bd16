"""The original's periodic jobs (REFERENCE.md 5.0-5.6), as the jobs benchmark's baseline.

Each job polls: the allocation job lists the nodes and calls every GPU node's kubelet /pods;
node info GETs every GPU node and calls its kubelet again, then reads and saves its row whole;
the workload job GETs every unfinished workload and every running pod it references; the pod
job GETs every running GPU pod. Written against the same tables and the same emulator as Lens,
with the same client library, so the figures compare ways of working, not languages.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import kubernetes
import peewee
import urllib3
from kubernetes.client.exceptions import ApiException

from lens.kube.machinery import resources
from lens.store import database, models

PRODUCT_LABEL = "amd.com/gpu.product-name"
RESOURCE = "amd.com/gpu"


@dataclasses.dataclass(slots=True)
class Requests:
    api: int = 0
    kubelet: int = 0

    @property
    def total(self) -> int:
        return self.api + self.kubelet


class Original:
    """One cycle of each of the original's jobs; `requests` counts what they asked for."""

    def __init__(
        self,
        api: kubernetes.client.ApiClient,
        db: peewee.Database,
        *,
        kubelets: dict[str, str],
        token: str,
        cluster: str,
    ) -> None:
        self._api = api
        self._db = db
        self._kubelets = kubelets
        self._token = token
        self._cluster = cluster
        self._discovery = resources.Discovery(api)
        # A pool per kubelet kept across calls: each node's TLS handshake is paid once, in the
        # first job that calls it (kinder to the baseline than Go's 100 idle connections in all).
        self._http = urllib3.PoolManager(
            num_pools=len(kubelets) + 1, cert_reqs="CERT_NONE", maxsize=1
        )
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        self.requests = Requests()

    def _get(self, path: str) -> dict[str, Any] | None:
        self.requests.api += 1
        try:
            return resources.request_json(self._api, "GET", path)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def _kubelet_pods(self, node: str) -> list[dict[str, Any]]:
        self.requests.kubelet += 1
        answer = self._http.request(
            "GET",
            self._kubelets[node] + "/pods",
            headers={"Authorization": f"Bearer {self._token}"},
        )
        items: list[dict[str, Any]] = json.loads(answer.data)["items"]
        return items

    def _gpu_nodes(self) -> list[dict[str, Any]]:
        self.requests.api += 1
        listed = resources.request_json(self._api, "GET", "/api/v1/nodes")
        return [n for n in listed["items"] if PRODUCT_LABEL in n["metadata"].get("labels", {})]

    @staticmethod
    def _allocated(pods: list[dict[str, Any]]) -> int:
        """The original's sum: Running pods, a pod once per GPU container (REFERENCE.md 5.1)."""
        total = 0
        for pod in pods:
            if (pod.get("status") or {}).get("phase") != "Running":
                continue
            for container in pod["spec"]["containers"]:
                request = (container.get("resources") or {}).get("requests") or {}
                if int(request.get(RESOURCE, 0)) > 0:
                    total += sum(
                        int(((c.get("resources") or {}).get("requests") or {}).get(RESOURCE, 0))
                        for c in pod["spec"]["containers"]
                    )
        return total

    def allocation(self) -> float:
        allocated = capacity = 0
        for node in self._gpu_nodes():
            capacity += int(node["status"]["capacity"].get(RESOURCE, 0))
            allocated += self._allocated(self._kubelet_pods(node["metadata"]["name"]))
        return 100.0 * allocated / capacity if capacity else 0.0

    def node_info(self) -> int:
        """GET each GPU node, its kubelet's pods, then select and save its row; rows written."""
        written = 0
        names = [n["metadata"]["name"] for n in self._gpu_nodes()]
        with database.session(self._db):
            for name in names:
                node = self._get(f"/api/v1/nodes/{name}")
                if node is None:
                    continue
                allocated = self._allocated(self._kubelet_pods(name))
                written += self._save_node(node, allocated)
        return written

    def _save_node(self, node: dict[str, Any], allocated: int) -> int:
        table = models.Node
        name = node["metadata"]["name"]
        status = node["status"]
        row = table.get_or_none((table.cluster == self._cluster) & (table.name == name))
        row = row or table(cluster=self._cluster, name=name)
        row.address = status["addresses"][0]["address"]
        row.gpu_name = node["metadata"]["labels"].get(PRODUCT_LABEL, "")
        row.gpu_count = int(status["capacity"].get(RESOURCE, 0))
        row.gpu_allocation = allocated
        row.cpu_count = int(status["capacity"].get("cpu", 0))
        row.memory = status["capacity"].get("memory", "")
        row.k8s_version = "1.23.1"
        row.os = status["nodeInfo"]["osImage"]
        row.kubelet_version = status["nodeInfo"]["kubeletVersion"]
        row.containerd_version = status["nodeInfo"]["containerRuntimeVersion"]
        row.save()
        return 1

    def overview(self) -> dict[str, float]:
        """The original's GET /v1/clusters/overview without its Prometheus queries
        (REFERENCE.md 2.1, 15.3): faulty nodes, idle classes and the allocation rate, each from
        its own node LIST, a GET of every GPU node, and (the last two) its kubelet's pods."""
        faulty = busy = idle = 0
        for node in self._each_gpu_node():
            conditions = node["status"].get("conditions") or []
            ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
            faulty += int(bool(node["spec"].get("taints")) or not ready)
        for node in self._each_gpu_node():
            capacity = int(node["status"]["capacity"].get(RESOURCE, 0))
            allocated = self._allocated(self._kubelet_pods(node["metadata"]["name"]))
            busy += int(allocated == capacity)
            idle += int(allocated == 0)
        allocated_all = capacity_all = 0
        for node in self._each_gpu_node():
            capacity_all += int(node["status"]["capacity"].get(RESOURCE, 0))
            allocated_all += self._allocated(self._kubelet_pods(node["metadata"]["name"]))
        rate = 100.0 * allocated_all / capacity_all if capacity_all else 0.0
        return {"faultyNodes": faulty, "busyNodes": busy, "idleNodes": idle, "allocationRate": rate}

    def _each_gpu_node(self) -> list[dict[str, Any]]:
        """The GPU nodes listed, then each fetched again by name, as the original's helpers do."""
        found = []
        for listed in self._gpu_nodes():
            node = self._get(f"/api/v1/nodes/{listed['metadata']['name']}")
            if node is not None:
                found.append(node)
        return found

    def workload_status(self) -> int:
        """GET each unfinished workload and each running pod it references; saves written."""
        written = 0
        with database.session(self._db):
            table, reference, pods = models.GpuWorkload, models.WorkloadPodReference, models.GpuPod
            open_workloads = list(
                table.select().where((table.cluster == self._cluster) & table.end_at.is_null())
            )
            for workload in open_workloads:
                kind = self._discovery.find(workload.group_version, workload.kind)
                found = self._get(kind.object_path(workload.namespace, workload.name))
                running = [
                    p
                    for p in pods.select()
                    .join(
                        reference,
                        on=(reference.pod_uid == pods.uid) & (reference.cluster == pods.cluster),
                    )
                    .where((reference.workload_uid == workload.uid) & (pods.running == True))  # noqa: E712
                ]
                live = [
                    self._get(f"/api/v1/namespaces/{p.namespace}/pods/{p.name}") for p in running
                ]
                workload.status = (
                    "Deleted" if found is None else ("Running" if any(live) else "Done")
                )
                workload.save()
                written += 1
        return written

    def pod_liveness(self) -> int:
        """GET every running GPU pod; the ones gone are saved deleted."""
        written = 0
        with database.session(self._db):
            table = models.GpuPod
            running = list(
                table.select().where((table.cluster == self._cluster) & (table.running == True))  # noqa: E712
            )
            for pod in running:
                if self._get(f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}") is None:
                    pod.running, pod.deleted, pod.phase = False, True, "Succeeded"
                    pod.save()
                    written += 1
        return written

    def consumers(self) -> int:
        """Every GPU node's kubelet pods, then each Running GPU pod's owner chain, a GET per
        level (REFERENCE.md 5.2; the utilization query to VictoriaMetrics left out); returns
        how many top-level owners were found."""
        tops: set[str] = set()
        for node in self._gpu_nodes():
            for pod in self._kubelet_pods(node["metadata"]["name"]):
                if (pod.get("status") or {}).get("phase") != "Running":
                    continue
                top = self._top_owner(pod)
                if top:
                    tops.add(top)
        return len(tops)

    def _top_owner(self, obj: dict[str, Any]) -> str:
        namespace = obj["metadata"].get("namespace", "")
        top = ""
        for _ in range(10):
            owners = obj["metadata"].get("ownerReferences") or []
            if not owners:
                break
            owner = owners[0]
            top = owner["uid"]
            kind = self._discovery.find(owner["apiVersion"], owner["kind"])
            found = self._get(kind.object_path(namespace, owner["name"]))
            if found is None:
                break
            obj = found
        return top

    def jobs(self) -> dict[str, Callable[[], object]]:
        return {
            "consumers": self.consumers,
            "allocation": self.allocation,
            "node-info": self.node_info,
            "workload-status": self.workload_status,
            "pod-liveness": self.pod_liveness,
        }
