"""Payloads of /v1/nodes (the original's GPUNode, GpuNodeDetail, GpuDeviceInfo) and of the
device changelog."""

from __future__ import annotations

from pydantic import BaseModel, Field

from lens.roles.api.schemas.measured import Measured


class GpuNode(BaseModel):
    """A GPU node in the list (the original's GPUNode)."""

    name: str
    ip: str
    gpu_name: str
    gpu_count: int
    gpu_allocation: int = Field(description="GPUs held by running pods.")
    gpu_utilization: float | None = Field(
        description="Mean utilization of the node's GPUs in percent, in the cluster's latest "
        "complete minute (measured.utilization); null: none of its GPUs reported in it."
    )
    status: str = Field(description="Ready, NotReady, Unknown or Deleted.")
    status_color: str = Field(description="green, red, yellow or gray (Deleted).")


class NodeListMeasured(BaseModel):
    nodes: Measured = Field(description="Status, GPUs and allocation: the jobs' node info.")
    utilization: Measured = Field(description="gpu_utilization: the latest complete minute.")


class NodeList(BaseModel):
    data: list[GpuNode]
    total: int = Field(description="Nodes matching the filters, on every page.")
    measured: NodeListMeasured


class GpuNodeDetail(BaseModel):
    """One node (the original's GpuNodeDetail)."""

    name: str
    health: str = Field(description="The node's status.")
    cpu: str = Field(description='"<count> X <model>" (the original\'s text).')
    memory: str = Field(description="Capacity memory as the node states it (2113459300Ki).")
    os: str
    gpu_driver_version: str
    static_gpu_details: str = Field(description='"<count> X <model>".')
    kubelet_version: str
    containerd_version: str
    cpu_count: int = Field(description="CPUs, from the node's capacity.")
    cpu_model: str | None = Field(
        description="The CPU model (jobs.node_cpu_model_label); null: no label says."
    )
    memory_bytes: int | None = Field(description="Capacity memory in bytes; null: unknown.")
    gpu_count: int
    gpu_model: str = Field(description="As the GPUs name themselves, else the node's label.")
    measured: Measured = Field(description="These facts: the jobs' node info.")


class GpuDeviceInfo(BaseModel):
    """A GPU present on a node (the original's GpuDeviceInfo, and its uuid)."""

    deviceId: int = Field(description="The GPU's index on its node; -1: unknown.")
    uuid: str
    model: str
    memory: str | None = Field(description='VRAM as "<GiB>GB"; null: unknown.')
    utilization: float | None = Field(
        description="Percent, the GPU's latest minute (null: none in the last minutes)."
    )
    temperature: float | None = Field(description="°C, the hottest sensor in that minute.")
    power: float | None = Field(description="Watts, the mean of that minute.")
    health: str | None = Field(
        default=None,
        description='The node agent\'s judgement: "healthy", or the state (degraded, unhealthy) '
        'and its active reasons, "degraded: throttle_thermal" (docs/node-agent.md); null: not '
        "judged.",
    )


class DeviceChange(BaseModel):
    """A device appearing on (CREATE), changing on (UPDATE) or leaving (DELETE) a node."""

    device_type: str = Field(description="gpu or rdma.")
    device_name: str = Field(description="A GPU's model; an RDMA device's name.")
    device_uuid: str = Field(description="A GPU's uuid; an RDMA device's node GUID.")
    op: str
    changes: str = Field(description='What an UPDATE changed: `serial: "A" -> "B"; ...`.')
    created_at: int = Field(description="When the inventory that told was taken (unix s).")


class DeviceChangeList(BaseModel):
    data: list[DeviceChange]
    total: int
