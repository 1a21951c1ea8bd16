"""How held GPUs are used: gpu_idle_intervals (lens/usage/idle.py finds them) and
gpu_hours_daily (lens/usage/gpuhours.py sums them)."""

from __future__ import annotations

import peewee

from lens.store.fields import UtcDateTimeField
from lens.store.models.base import NAME, NAMESPACE, UID, LensModel, created, text
from lens.store.models.reports import GPU_UUID

LABEL_KEY = (
    128  # the team label key (jobs.team_label); the unique index must fit MariaDB's 3,072 bytes
)
LABEL_VALUE = 253  # a namespace, a uid or a label value (63) all fit
GPU_MODEL = 128


class GpuIdleInterval(LensModel):
    """[started_at, ended_at) in which a pod held a GPU whose utilization stayed under the
    floor (jobs.idle_utilization_floor) for at least the window (jobs.idle_window_minutes).

    `open` while it may still grow; workload_uid is the pod's top-level workload ('' unknown).
    """

    node_name = peewee.CharField(max_length=NAME)
    gpu_uuid = peewee.CharField(max_length=GPU_UUID)
    pod_uid = peewee.CharField(max_length=UID)
    namespace = text(NAMESPACE)
    pod_name = text(NAME)
    workload_uid = text(UID)
    started_at = UtcDateTimeField()
    ended_at = UtcDateTimeField()
    minutes = peewee.IntegerField()
    utilization_mean_ratio = peewee.DoubleField()
    open = peewee.BooleanField()
    updated_at = created()

    class Meta:
        table_name = "gpu_idle_intervals"
        indexes = (
            (("cluster", "node_name", "gpu_uuid", "pod_uid", "started_at"), True),
            (("cluster", "ended_at"), False),
            (("cluster", "namespace", "ended_at"), False),
            (("cluster", "open"), False),
        )


class GpuHoursDaily(LensModel):
    """One group's GPU-hours of one UTC day on one GPU model (lens/usage/gpuhours.py): held
    (allocated), used (utilization-weighted) and measured (held with utilization known).

    group_kind is namespace, workload (group_value its top-level uid) or label (group_key the
    label, group_value its value on the pod's top-level workload, '' without)."""

    day = UtcDateTimeField()  # the day's start, 00:00 UTC
    group_kind = peewee.CharField(max_length=16)
    group_key = text(LABEL_KEY)
    group_value = peewee.CharField(max_length=LABEL_VALUE)
    gpu_model = text(GPU_MODEL)
    held_gpu_hours = peewee.DoubleField()
    used_gpu_hours = peewee.DoubleField()
    measured_gpu_hours = peewee.DoubleField()
    updated_at = created()

    class Meta:
        table_name = "gpu_hours_daily"
        indexes = (
            (("cluster", "day", "group_kind", "group_key", "group_value", "gpu_model"), True),
            (("cluster", "group_kind", "group_value", "day"), False),
        )
