"""Workloads above GPU pods: gpu_workloads, their snapshots and pod references, workload events
and training performance."""

from __future__ import annotations

import peewee

from lens.store.fields import JsonField, UtcDateTimeField
from lens.store.models.base import NAME, NAMESPACE, UID, LensModel, created, text


class GpuWorkload(LensModel):
    """A workload (Deployment, Job, PyTorchJob...) owning GPU pods; parent_uid '' is top level."""

    group_version = text(128)
    kind = peewee.CharField(max_length=64)
    namespace = text(NAMESPACE)
    name = peewee.CharField(max_length=NAME)
    uid = peewee.CharField(max_length=UID)
    parent_uid = text(UID)
    gpu_request = peewee.IntegerField(default=0)
    status = text(32)
    status_reason = text(128)  # why it failed (BackoffLimitExceeded, OOMKilled, ...); '' else
    source = text(64)
    labels = JsonField(null=True)
    created_at = created()
    updated_at = created()
    end_at = UtcDateTimeField(null=True)
    deleted_at = UtcDateTimeField(null=True)

    class Meta:
        table_name = "gpu_workloads"
        indexes = (
            (("cluster", "uid"), True),
            (("cluster", "parent_uid"), False),
            (("cluster", "status"), False),
            (("cluster", "end_at"), False),
            (("cluster", "updated_at"), False),
        )


class GpuWorkloadSnapshot(LensModel):
    """A workload object as it was at one resourceVersion."""

    APPEND_ONLY = True

    uid = peewee.CharField(max_length=UID)
    group_version = text(128)
    kind = text(64)
    name = text(NAME)
    namespace = text(NAMESPACE)
    metadata = JsonField(null=True)
    detail = JsonField(null=True)
    resource_version = peewee.BigIntegerField()
    created_at = created()

    class Meta:
        table_name = "gpu_workload_snapshots"
        indexes = (
            (("cluster", "uid", "resource_version"), True),
            (("created_at",), False),
        )


class WorkloadPodReference(LensModel):
    """That a pod belongs to a workload (one row per level of its owner chain)."""

    workload_uid = peewee.CharField(max_length=UID)
    pod_uid = peewee.CharField(max_length=UID)
    created_at = created()

    class Meta:
        table_name = "workload_pod_references"
        indexes = (
            (("cluster", "workload_uid", "pod_uid"), True),
            (("cluster", "pod_uid"), False),
        )


class WorkloadEvent(LensModel):
    """A training milestone of a workload (StartTrain) with its run serial."""

    APPEND_ONLY = True

    workload_uid = peewee.CharField(max_length=UID)
    type = peewee.CharField(max_length=64)
    run_serial = peewee.IntegerField(default=1)
    pod_uid = text(UID)
    nearest_workload_uid = text(UID)
    created_at = created()

    class Meta:
        table_name = "workload_events"
        indexes = (
            (("cluster", "workload_uid", "type", "run_serial"), True),
            (("cluster", "nearest_workload_uid"), False),
            (("created_at",), False),
        )


class TrainingPerformance(LensModel):
    """One training iteration's figures parsed from a workload's log."""

    APPEND_ONLY = True

    pod_uuid = text(UID)
    workload_uid = peewee.CharField(max_length=UID)
    serial = peewee.IntegerField(default=1)
    iteration = peewee.BigIntegerField()
    performance = JsonField(null=True)
    created_at = created()

    class Meta:
        table_name = "training_performance"
        indexes = (
            (("cluster", "workload_uid", "serial", "iteration"), True),
            (("cluster", "workload_uid", "created_at"), False),
            (("created_at",), False),
        )
