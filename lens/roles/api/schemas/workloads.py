"""Payloads of /v1/workloads (list, detail, hierarchy, trainingPerformance), /v1/workloadMetadata,
/v1/nodes/{name}/workloads and workloadsHistory, /v1/clusters/consumers and /v1/storage/stat:
the original's shapes (REFERENCE.md 2.1), a figure Lens does not know null."""

from __future__ import annotations

from pydantic import BaseModel, Field

from lens.roles.api.schemas.measured import Measured

GPU_ALLOCATION = (
    "GPU-seconds held, by GPU model (`unknown`: a GPU the agents' inventory did not name), as "
    "the node agents saw the workload's containers hold GPUs; null: none seen."
)


STATUS = (
    "Pending, Running, Succeeded, Failed or Deleted, as Kubernetes tells it (the original's "
    "Done is Succeeded)."
)
STATUS_REASON = (
    "Why it failed: its terminal condition's reason (BackoffLimitExceeded, DeadlineExceeded) "
    "or its failed pod's (OOMKilled, Evicted, Error); empty unless Failed."
)
STATUS_COLOR = (
    "The original's colours for its statuses: green (Running), blue (Succeeded, its Done), "
    "gray (Deleted); yellow (Pending), red (Failed)."
)


class WorkloadListItem(BaseModel):
    """A top-level workload (the original's WorkloadListItem)."""

    kind: str
    name: str
    namespace: str
    uid: str
    gpu_allocated: int = Field(description="GPUs its live pods request; ended: its last request.")
    gpu_allocation: dict[str, float] | None = Field(description=GPU_ALLOCATION)
    status: str = Field(description=STATUS)
    status_reason: str = Field(description=STATUS_REASON)
    status_color: str = Field(description=STATUS_COLOR)
    start_at: int = Field(description="When the object was created (unix s).")
    end_at: int | None = Field(description="When it ended (unix s); null while it runs.")
    source: str


class WorkloadListMeasured(BaseModel):
    status: Measured = Field(description="Statuses and GPUs: the controller's watch.")
    gpu_hours: Measured = Field(description="gpu_allocation: the jobs' GPU-hours.")


class WorkloadList(BaseModel):
    data: list[WorkloadListItem]
    total: int = Field(description="Workloads matching the filters, on every page.")
    measured: WorkloadListMeasured


class WorkloadPod(BaseModel):
    nodeName: str = Field(description="The node it was placed on; empty: not scheduled.")
    podNamespace: str
    podName: str


class WorkloadDetail(BaseModel):
    """One workload at any level (the original's detail)."""

    apiVersion: str
    kind: str
    name: str
    namespace: str
    uid: str
    gpu_allocation: dict[str, float] | None = Field(description=GPU_ALLOCATION)
    status: str = Field(description=STATUS)
    status_reason: str = Field(description=STATUS_REASON)
    status_color: str = Field(description=STATUS_COLOR)
    pods: list[WorkloadPod] = Field(description="Every GPU pod it had, oldest first.")
    startTime: int = Field(description="When the object was created (unix s).")
    endTime: int | None = Field(description="When it ended (unix s); null while it runs.")
    source: str


class WorkloadHierarchy(BaseModel):
    """A workload and the workloads it owns, down to the ones owning GPU pods."""

    kind: str
    name: str
    namespace: str
    uid: str
    children: list[WorkloadHierarchy] = Field(description="By name.")


class TrainingPoint(BaseModel):
    """One figure of one training iteration."""

    metric: str
    value: float
    timestamp: int = Field(description="When the iteration was logged (unix ms).")


class WorkloadMetadata(BaseModel):
    namespaces: list[str] = Field(description="Namespaces of the top-level workloads, sorted.")
    kinds: list[str] = Field(description="Kinds of the top-level workloads, sorted.")


class NodeWorkload(BaseModel):
    """A top-level workload with running GPU pods on the node (a pod nothing owns: kind Pod)."""

    kind: str
    name: str
    namespace: str
    uid: str
    gpu_allocated: int = Field(description="GPUs of all its running pods.")
    gpu_allocated_node: int = Field(description="GPUs of its running pods on this node.")
    node_name: str
    status: str


class NodeWorkloadList(BaseModel):
    data: list[NodeWorkload]
    total: int
    measured: Measured = Field(description="The controller's watch of pods.")


class NodeWorkloadHistoryItem(BaseModel):
    """A GPU pod that ran on the node and ended, with its top-level workload (itself, kind Pod,
    when nothing stored owns it)."""

    kind: str
    name: str
    namespace: str
    uid: str
    gpu_allocated: int = Field(description="GPUs the pod requested.")
    pod_name: str
    pod_namespace: str
    start_time: int = Field(description="When the pod was created (unix s).")
    end_time: int | None = Field(description="When it finished or was deleted (unix s).")


class NodeWorkloadHistory(BaseModel):
    data: list[NodeWorkloadHistoryItem]
    total: int


class ConsumerStat(BaseModel):
    gpu_request: int = Field(description="GPUs its running pods request, each pod once.")
    gpu_utilization: float | None = Field(
        description="Mean utilization (percent) of the GPUs its own pods held over the last "
        "minutes, weighted by the seconds held; null: no minute known."
    )


class Consumer(BaseModel):
    """A top-level workload with running GPU pods (a pod nothing owns: kind Pod)."""

    kind: str
    name: str
    namespace: str
    uid: str
    stat: ConsumerStat
    pods: list[WorkloadPod] = Field(description="Its running GPU pods.")
    source: str


class ConsumerList(BaseModel):
    data: list[Consumer]
    total: int
    measured: Measured = Field(description="Pods and GPUs: the controller's watch of pods.")


class StorageStat(BaseModel):
    """The cluster's storage backends summed; null where no backend's figure is known."""

    total_space: int | None = Field(description="Capacity in bytes.")
    used_space: int | None
    usage_percentage: float | None
    total_inodes: int | None
    used_inodes: int | None
    inodes_usage_percentage: float | None
    read_bandwidth: float | None = Field(description="Not read yet: always null.")
    write_bandwidth: float | None = Field(description="Not read yet: always null.")
