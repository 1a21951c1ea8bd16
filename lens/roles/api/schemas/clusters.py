"""Payloads of /v1/clusters."""

from __future__ import annotations

from pydantic import BaseModel, Field

from lens.roles.api.schemas.measured import Measured


class OverviewMeasured(BaseModel):
    """When each group of the overview's figures was measured."""

    nodes: Measured = Field(
        description="Nodes by status, idle and busy nodes, GPUs: the jobs' node info."
    )
    allocation: Measured = Field(
        description="GPUs allocated and the allocation rate: the controller's watch of pods."
    )
    utilization: Measured = Field(description="utilization: the latest complete minute.")
    storage: Measured = Field(description="The storage figures: the jobs' storage scan.")


class ClusterOverview(BaseModel):
    """The cluster now: the original's flat object (storage, RDMA, nodes, allocation), with the
    GPU totals beside it. A figure Lens does not know yet is null, never a made-up 0."""

    total_space: int | None = Field(description="Storage capacity in bytes.")
    used_space: int | None
    usage_percentage: float | None
    total_inodes: int | None
    used_inodes: int | None
    inodes_usage_percentage: float | None
    read_bandwidth: float | None = Field(description="Not read yet: always null.")
    write_bandwidth: float | None = Field(description="Not read yet: always null.")
    total_tx: float | None = Field(description="Not read yet: always null.")
    total_rx: float | None = Field(description="Not read yet: always null.")
    totalNodes: int
    healthyNodes: int
    faultyNodes: int = Field(description="Nodes not Ready or with any taint.")
    fullyIdleNodes: int
    partiallyIdleNodes: int
    busyNodes: int
    totalGpus: int
    allocatedGpus: int
    allocationRate: float | None = Field(description="Percent of the GPUs held; null: no GPU.")
    utilization: float | None = Field(
        description="Mean utilization of the GPUs known in the latest complete minute, each GPU "
        "weighing the same, percent; null: none known."
    )
    measured: OverviewMeasured
