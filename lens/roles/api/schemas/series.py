"""Payloads of the time series and GPU figures (routers/series.py): the original's shared
MetricsGraph and TimePoint (REFERENCE.md 2.1), and the payloads built of them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from lens.roles.api.schemas.measured import Measured


class TimePoint(BaseModel):
    timestamp: int = Field(description="The start of the step's bucket, unix seconds.")
    value: float


class Series(BaseModel):
    labels: dict[str, str] = Field(description="What the series is of (gpu_id, a node...).")
    values: list[TimePoint] = Field(description="One point per bucket with data, in time order.")


class GraphConfig(BaseModel):
    y_axis_unit: str


class MetricsGraph(BaseModel):
    """A chart: its place among the charts of a page, its series and its unit."""

    serial: int
    series: list[Series]
    config: GraphConfig


class NodeGpuMetrics(BaseModel):
    gpu_utilization: MetricsGraph = Field(description="One series per GPU (label gpu_id), %.")
    gpu_allocation_rate: MetricsGraph = Field(description="The node's GPUs held by pods, %.")


class NodeAllocation(BaseModel):
    node: str
    vendor: str | None = Field(description="Its GPUs' vendor; null: not reported by its agent.")
    capacity: int = Field(description="GPUs.")
    allocated: int = Field(description="GPUs held by pods.")
    allocationRate: float = Field(description="allocated / capacity, 0 to 1.")


class ClusterUtilizationMeasured(BaseModel):
    allocation: Measured = Field(description="allocationRate: the jobs' node info.")
    utilization: Measured = Field(description="utilization: the latest complete minute.")


class ClusterUtilization(BaseModel):
    allocationRate: float | None = Field(description="GPUs held over GPUs, %; null: no GPU.")
    utilization: float | None = Field(
        description="Mean GPU utilization in the latest complete minute, %; null: none recent."
    )
    measured: ClusterUtilizationMeasured


class UtilizationHistory(BaseModel):
    """The cluster's figures per step: one point per bucket with data."""

    allocationRate: list[TimePoint] = Field(description="Seconds GPUs were held by pods, %.")
    utilization: list[TimePoint] = Field(description="Mean GPU utilization, %.")
    vramUtilization: list[TimePoint] = Field(description="Mean VRAM in use over VRAM, %.")


class HeatmapCell(BaseModel):
    node_name: str
    gpu_id: int = Field(description="The GPU's index on its node.")
    value: float
    held: bool = Field(description="Held by a container for some of the minute (else free).")


class Heatmap(BaseModel):
    serial: int
    unit: str
    yaxis_max: float
    yaxis_min: float
    Data: list[HeatmapCell] = Field(
        description="The GPUs of the top nodes (capital D: as the original)."
    )


class ClusterHeatmap(BaseModel):
    power: Heatmap
    temperature: Heatmap
    utilization: Heatmap
    measured: Measured = Field(description="The minute every cell is of.")


class WorkloadMetrics(BaseModel):
    """The original's map of chart names to charts; each series of a GPU chart is a node
    (label primus_lens_node_name)."""

    model_config = ConfigDict(populate_by_name=True)

    gpu_utilization: MetricsGraph = Field(alias="GPU Utilization")
    gpu_memory_utilization: MetricsGraph = Field(alias="GPU Memory Utilization")
    gpu_power: MetricsGraph = Field(alias="GPU Power")
    training_performance: MetricsGraph = Field(
        alias="TrainingPerformance",
        description='Series "tflops" and "iteration", named in label primus_lens_node_name as '
        "the original did; x: when the row was stored.",
    )
