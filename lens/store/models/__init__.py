"""Peewee models of every table Lens keeps (REFERENCE.md section 4, with the seeds' plural names),
one module per domain.

Models are declared unbound; store/database.py binds them. Every row carries its `cluster`;
each table's one unique index is its natural key (store/upserting.py writes on it) and the
other indexes serve the hot queries REFERENCE.md lists. The schema itself is created by the
versioned migrations in store/migrations/, and a test keeps the two in step.
"""

from lens.store.models.base import CLUSTER, NAME, NAMESPACE, UID, LensModel, natural_key
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
    DAY_PARTITIONED,
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
from lens.store.models.tables import ALL_MODELS, APPEND_ONLY_MODELS
from lens.store.models.training import TrainingStraggler
from lens.store.models.usage import GpuHoursDaily, GpuIdleInterval
from lens.store.models.workloads import (
    GpuWorkload,
    GpuWorkloadSnapshot,
    TrainingPerformance,
    WorkloadEvent,
    WorkloadPodReference,
)

__all__ = [
    "ALL_MODELS",
    "APPEND_ONLY_MODELS",
    "CLUSTER",
    "DAY_PARTITIONED",
    "NAME",
    "NAMESPACE",
    "UID",
    "EventStream",
    "FigureFreshness",
    "GpuDevice",
    "GpuHour",
    "GpuHourHolder",
    "GpuHourPending",
    "GpuHoursDaily",
    "GpuIdleInterval",
    "GpuMinuteHolder",
    "GpuMinutePod",
    "GpuMinuteReport",
    "GpuPod",
    "GpuPodEvent",
    "GpuWorkload",
    "GpuWorkloadSnapshot",
    "LensModel",
    "Node",
    "NodeContainer",
    "NodeContainerDevice",
    "NodeContainerEvent",
    "NodeDeviceChangelog",
    "PodResource",
    "PodSnapshot",
    "RdmaDevice",
    "RdmaPortMinute",
    "RollupStart",
    "Storage",
    "TrainingPerformance",
    "TrainingStraggler",
    "WorkloadEvent",
    "WorkloadPodReference",
    "natural_key",
]
