"""Payloads of the routes beyond the original: /v1/gpus (every GPU, live), /v1/idle (idle GPUs
now and over a range) and /v1/gpuHours (GPU-hours per group, for chargeback). Names say their
units; times are unix seconds, days ISO dates (UTC)."""

from __future__ import annotations

import datetime

from pydantic import BaseModel, Field

from lens.roles.api.schemas.measured import Measured


class Workload(BaseModel):
    """A top-level workload (or, in GPU-hours, a pod without an owner: kind Pod)."""

    uid: str
    kind: str
    name: str
    namespace: str


class GpuHolder(BaseModel):
    """The pod holding a GPU in its latest minute (containers outside any pod: pod fields '')."""

    namespace: str
    pod_name: str
    pod_uid: str
    containers: list[str] = Field(description="Its containers that held the GPU.")
    held_seconds: float = Field(description="Seconds it held the GPU in that minute.")
    workload: Workload | None = Field(description="Its top-level workload; null: none known.")


class Gpu(BaseModel):
    """A GPU present now, with the figures of its latest GPU-minute (null: no minute in the
    last 5 minutes) and who held it then."""

    node: str
    gpu_id: int = Field(description="The GPU's index on its node; -1: unknown.")
    uuid: str
    model: str
    memory_total_bytes: int | None = Field(description="VRAM; null: unknown.")
    as_of: int | None = Field(
        description="Start (unix s) of the minute the live figures and holder are of; null: "
        "no minute reported in the last 5 minutes, and every live figure is null."
    )
    utilization_percent: float | None = Field(description="Mean over the minute.")
    memory_used_bytes: int | None = Field(description="VRAM used, mean over the minute.")
    power_watts: float | None = Field(description="Mean over the minute.")
    temperature_celsius: float | None = Field(
        description="The hottest sensor's greatest reading in the minute."
    )
    holder: GpuHolder | None = Field(
        description="The pod that held it longest in that minute; null: free (or as_of null)."
    )
    holder_pods: int = Field(description="Pods that held it in that minute (2 or more: shared).")


class GpuList(BaseModel):
    data: list[Gpu]
    total: int = Field(description="GPUs matching the filters, on every page.")


class IdleGpu(BaseModel):
    """A GPU held by a pod and idle: under the utilization floor for at least the window."""

    node: str
    gpu_uuid: str
    gpu_id: int | None = Field(description="The GPU's index; null: not in the inventory.")
    gpu_model: str | None
    namespace: str
    pod_name: str
    pod_uid: str
    workload: Workload | None = Field(description="The pod's top-level workload; null: none.")
    since: int = Field(description="Start of its first idle minute (unix s).")
    until: int = Field(description="End of its last idle minute seen so far (unix s).")
    minutes: int = Field(description="Its idle minutes, all of them.")
    minutes_in_range: float | None = Field(
        description="Its idle minutes inside [start, end); null when no range was asked."
    )
    utilization_percent: float = Field(description="Mean over its idle minutes.")
    open: bool = Field(description="Idle still (it may grow); false: it ended at `until`.")


class NamespaceIdle(BaseModel):
    namespace: str
    intervals: int = Field(
        description="Idle intervals of its pods (GPUs idle now, without a range)."
    )
    idle_gpu_hours: float = Field(
        description="Their idle minutes in hours: inside the range, or so far without one."
    )


class IdleList(BaseModel):
    data: list[IdleGpu]
    total: int = Field(description="Intervals matching, on every page.")
    namespaces: list[NamespaceIdle] = Field(description="Totals over every interval matching.")
    start: int | None = Field(description="The range asked (unix s); null: idle now.")
    end: int | None
    measured: Measured = Field(
        description="The intervals: the jobs' idle GPUs, through the minute they read last."
    )


class GpuHoursGroup(BaseModel):
    kind: str = Field(description="namespace, workload or label.")
    key: str = Field(description="The label's key for kind label; '' else.")
    value: str = Field(
        description="The namespace; the top-level workload's uid (a pod's without an owner); "
        "or the label's value ('' for workloads without it)."
    )
    workload: Workload | None = Field(description="Kind workload: what it is; null else.")


class GpuHoursRow(BaseModel):
    """One group's GPU-hours on one GPU model over the days asked."""

    group: GpuHoursGroup
    gpu_model: str = Field(description="'' when the GPU's model is not known.")
    held_gpu_hours: float = Field(description="Allocated: seconds its containers held GPUs.")
    used_gpu_hours: float = Field(description="Held hours weighted by each minute's utilization.")
    measured_gpu_hours: float = Field(description="Held hours whose utilization was known.")


class GpuHoursList(BaseModel):
    data: list[GpuHoursRow]
    total: int = Field(description="Rows (group and model) on every page.")
    start: datetime.date = Field(description="The first UTC day summed.")
    end: datetime.date = Field(description="The last UTC day summed (included).")
    measured: Measured = Field(
        description="The sums: the jobs' GPU-hours, through the minutes the rollup had then."
    )
