"""Every table, in creation order, and those that only ever grow (store/retention.py trims them)."""

from __future__ import annotations

from lens.store.models.base import LensModel
from lens.store.models.containers import (
    EventStream,
    NodeContainer,
    NodeContainerDevice,
    NodeContainerEvent,
)
from lens.store.models.freshness import FigureFreshness
from lens.store.models.nodes import GpuDevice, Node, NodeDeviceChangelog, RdmaDevice
from lens.store.models.pods import GpuPod, GpuPodEvent, PodResource, PodSnapshot
from lens.store.models.reports import (
    GpuHour,
    GpuHourHolder,
    GpuHourPending,
    GpuMinuteHolder,
    GpuMinutePod,
    GpuMinuteReport,
    RdmaPortMinute,
    RollupStart,
)
from lens.store.models.storage import Storage
from lens.store.models.training import TrainingStraggler
from lens.store.models.usage import GpuHoursDaily, GpuIdleInterval
from lens.store.models.workloads import (
    GpuWorkload,
    GpuWorkloadSnapshot,
    TrainingPerformance,
    WorkloadEvent,
    WorkloadPodReference,
)

ALL_MODELS: tuple[type[LensModel], ...] = (
    Node,
    GpuDevice,
    RdmaDevice,
    NodeDeviceChangelog,
    GpuPod,
    GpuPodEvent,
    PodSnapshot,
    PodResource,
    GpuWorkload,
    GpuWorkloadSnapshot,
    WorkloadPodReference,
    NodeContainer,
    NodeContainerDevice,
    NodeContainerEvent,
    EventStream,
    TrainingPerformance,
    WorkloadEvent,
    Storage,
    GpuMinuteReport,
    GpuMinuteHolder,
    RdmaPortMinute,
    GpuHour,
    GpuHourHolder,
    GpuHourPending,
    GpuIdleInterval,
    GpuHoursDaily,
    TrainingStraggler,
    GpuMinutePod,
    RollupStart,
    FigureFreshness,
)

APPEND_ONLY_MODELS: tuple[type[LensModel], ...] = tuple(m for m in ALL_MODELS if m.APPEND_ONLY)
