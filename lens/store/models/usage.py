"""How held GPUs are used: gpu_idle_intervals (lens/usage/idle.py finds them)."""

from __future__ import annotations

import peewee

from lens.store.fields import UtcDateTimeField
from lens.store.models.base import NAME, NAMESPACE, UID, LensModel, created, text
from lens.store.models.reports import GPU_UUID


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
