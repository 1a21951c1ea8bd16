"""GPU pods: gpu_pods, gpu_pods_events, pod_snapshots, pod_resources (the controller writes
them)."""

from __future__ import annotations

import peewee

from lens.store.fields import JsonField, UtcDateTimeField
from lens.store.models.base import NAME, NAMESPACE, UID, LensModel, created, text


class GpuPod(LensModel):
    """A pod that requests GPUs, from its creation until it is gone."""

    namespace = peewee.CharField(max_length=NAMESPACE)
    name = peewee.CharField(max_length=NAME)
    node_name = text(NAME)
    uid = peewee.CharField(max_length=UID)
    gpu_allocated = peewee.IntegerField(default=0)
    phase = text(32)
    deleted = peewee.BooleanField(default=False)
    running = peewee.BooleanField(default=False)
    ip = text(64)
    owner_uid = text(UID)
    created_at = created()
    updated_at = created()

    class Meta:
        table_name = "gpu_pods"
        indexes = (
            (("cluster", "uid"), True),
            (("cluster", "node_name", "running"), False),
            (("cluster", "updated_at"), False),
        )


class GpuPodEvent(LensModel):
    """A phase or condition transition of a GPU pod, stamped with the transition's time."""

    APPEND_ONLY = True

    pod_uuid = peewee.CharField(max_length=UID)
    pod_phase = text(32)
    event_type = peewee.CharField(max_length=64)
    status = text(32)
    restart_count = peewee.IntegerField(default=0)
    created_at = created()

    class Meta:
        table_name = "gpu_pods_events"
        indexes = (
            (("cluster", "pod_uuid", "event_type", "status", "created_at"), True),
            (("created_at",), False),
        )


class PodSnapshot(LensModel):
    """A pod's spec, metadata and status at one resourceVersion."""

    APPEND_ONLY = True

    pod_uid = peewee.CharField(max_length=UID)
    pod_name = text(NAME)
    namespace = text(NAMESPACE)
    spec = JsonField(null=True)
    metadata = JsonField(null=True)
    status = JsonField(null=True)
    resource_version = peewee.BigIntegerField()
    created_at = created()

    class Meta:
        table_name = "pod_snapshots"
        indexes = (
            (("cluster", "pod_uid", "resource_version"), True),
            (("created_at",), False),
        )


class PodResource(LensModel):
    """GPUs a pod held, of which model, from its start to its end (GPU-seconds)."""

    uid = peewee.CharField(max_length=UID)
    gpu_model = text(128)
    gpu_allocated = peewee.IntegerField(default=0)
    created_at = created()
    end_at = UtcDateTimeField(null=True)

    class Meta:
        table_name = "pod_resources"
        indexes = ((("cluster", "uid"), True),)
