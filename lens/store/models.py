"""Peewee models of every table Lens keeps (REFERENCE.md section 4, with the seeds' plural names).

Models are declared unbound; store/database.py binds them. Every row carries its `cluster`;
each table's one unique index is its natural key (store/upserting.py writes on it) and the
other indexes serve the hot queries REFERENCE.md lists. The schema itself is created by the
versioned migrations in store/migrations/, and a test keeps the two in step.
"""

from __future__ import annotations

from typing import Any, ClassVar

import peewee

from lens.store.fields import JsonField, UtcDateTimeField, utc_now

# Kubernetes limits: names of most objects 253, namespaces and labels 63, UIDs 36.
NAME = 253
NAMESPACE = 64
UID = 64
CLUSTER = 64


class LensModel(peewee.Model):
    """Base of every table: a 64-bit id and the cluster the row belongs to."""

    # True for tables that only ever grow (events, snapshots): store/retention.py trims them.
    APPEND_ONLY: ClassVar[bool] = False

    id = peewee.BigAutoField()
    cluster = peewee.CharField(max_length=CLUSTER)

    class Meta:
        legacy_table_names = False


def _text(length: int) -> peewee.CharField:
    return peewee.CharField(max_length=length, default="")


def _created() -> UtcDateTimeField:
    return UtcDateTimeField(default=utc_now)


class Node(LensModel):
    """A GPU node as the jobs see it (node_info job)."""

    name = peewee.CharField(max_length=NAME)
    address = _text(64)
    gpu_name = _text(128)
    gpu_allocation = peewee.IntegerField(default=0)
    gpu_count = peewee.IntegerField(default=0)
    gpu_utilization = peewee.DoubleField(null=True)
    status = _text(64)
    cpu = _text(128)
    cpu_count = peewee.IntegerField(default=0)
    memory = _text(64)
    k8s_version = _text(64)
    k8s_status = _text(64)
    kubelet_version = _text(64)
    containerd_version = _text(128)
    os = _text(128)
    driver_version = _text(64)
    created_at = _created()
    updated_at = _created()

    class Meta:
        table_name = "nodes"
        indexes = ((("cluster", "name"), True),)


class GpuDevice(LensModel):
    """One GPU of a node with its last known static facts and readings."""

    node_name = peewee.CharField(max_length=NAME)
    gpu_id = peewee.IntegerField()
    gpu_model = _text(128)
    memory = peewee.BigIntegerField(default=0)  # VRAM in MiB, as the original
    utilization = peewee.DoubleField(null=True)
    temperature = peewee.DoubleField(null=True)
    power = peewee.DoubleField(null=True)
    serial = _text(128)
    numa_node = peewee.IntegerField(null=True)
    numa_affinity = peewee.IntegerField(null=True)
    created_at = _created()
    updated_at = _created()

    class Meta:
        table_name = "gpu_devices"
        indexes = ((("cluster", "node_name", "gpu_id"), True),)


class RdmaDevice(LensModel):
    """One RDMA device of a node; removed devices keep their row with deleted_at set."""

    node_name = peewee.CharField(max_length=NAME)
    ifname = peewee.CharField(max_length=64)
    node_guid = _text(64)
    if_index = peewee.IntegerField(default=0)
    fw = _text(64)
    node_type = _text(64)
    created_at = _created()
    updated_at = _created()
    deleted_at = UtcDateTimeField(null=True)

    class Meta:
        table_name = "rdma_devices"
        indexes = ((("cluster", "node_name", "ifname"), True),)


class NodeDeviceChangelog(LensModel):
    """A GPU or RDMA device appearing on (CREATE) or leaving (DELETE) a node."""

    APPEND_ONLY = True

    node_name = peewee.CharField(max_length=NAME)
    device_type = peewee.CharField(max_length=32)
    device_name = _text(256)
    device_uuid = peewee.CharField(max_length=128)
    op = peewee.CharField(max_length=32)
    created_at = _created()

    class Meta:
        table_name = "node_device_changelog"
        indexes = (
            (("cluster", "node_name", "device_type", "device_uuid", "op", "created_at"), True),
            (("created_at",), False),
        )


class GpuPod(LensModel):
    """A pod that requests GPUs, from its creation until it is gone."""

    namespace = peewee.CharField(max_length=NAMESPACE)
    name = peewee.CharField(max_length=NAME)
    node_name = _text(NAME)
    uid = peewee.CharField(max_length=UID)
    gpu_allocated = peewee.IntegerField(default=0)
    phase = _text(32)
    deleted = peewee.BooleanField(default=False)
    running = peewee.BooleanField(default=False)
    ip = _text(64)
    owner_uid = _text(UID)
    created_at = _created()
    updated_at = _created()

    class Meta:
        table_name = "gpu_pods"
        indexes = (
            (("cluster", "uid"), True),
            (("cluster", "node_name", "running"), False),
        )


class GpuPodEvent(LensModel):
    """A phase or condition transition of a GPU pod, stamped with the transition's time."""

    APPEND_ONLY = True

    pod_uuid = peewee.CharField(max_length=UID)
    pod_phase = _text(32)
    event_type = peewee.CharField(max_length=64)
    status = _text(32)
    restart_count = peewee.IntegerField(default=0)
    created_at = _created()

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
    pod_name = _text(NAME)
    namespace = _text(NAMESPACE)
    spec = JsonField(null=True)
    metadata = JsonField(null=True)
    status = JsonField(null=True)
    resource_version = peewee.BigIntegerField()
    created_at = _created()

    class Meta:
        table_name = "pod_snapshots"
        indexes = (
            (("cluster", "pod_uid", "resource_version"), True),
            (("created_at",), False),
        )


class PodResource(LensModel):
    """GPUs a pod held, of which model, from its start to its end (GPU-seconds)."""

    uid = peewee.CharField(max_length=UID)
    gpu_model = _text(128)
    gpu_allocated = peewee.IntegerField(default=0)
    created_at = _created()
    end_at = UtcDateTimeField(null=True)

    class Meta:
        table_name = "pod_resources"
        indexes = ((("cluster", "uid"), True),)


class GpuWorkload(LensModel):
    """A workload (Deployment, Job, PyTorchJob...) owning GPU pods; parent_uid '' is top level."""

    group_version = _text(128)
    kind = peewee.CharField(max_length=64)
    namespace = _text(NAMESPACE)
    name = peewee.CharField(max_length=NAME)
    uid = peewee.CharField(max_length=UID)
    parent_uid = _text(UID)
    gpu_request = peewee.IntegerField(default=0)
    status = _text(32)
    source = _text(64)
    labels = JsonField(null=True)
    created_at = _created()
    updated_at = _created()
    end_at = UtcDateTimeField(null=True)
    deleted_at = UtcDateTimeField(null=True)

    class Meta:
        table_name = "gpu_workloads"
        indexes = (
            (("cluster", "uid"), True),
            (("cluster", "parent_uid"), False),
            (("cluster", "status"), False),
            (("cluster", "end_at"), False),
        )


class GpuWorkloadSnapshot(LensModel):
    """A workload object as it was at one resourceVersion."""

    APPEND_ONLY = True

    uid = peewee.CharField(max_length=UID)
    group_version = _text(128)
    kind = _text(64)
    name = _text(NAME)
    namespace = _text(NAMESPACE)
    metadata = JsonField(null=True)
    detail = JsonField(null=True)
    resource_version = peewee.BigIntegerField()
    created_at = _created()

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
    created_at = _created()

    class Meta:
        table_name = "workload_pod_references"
        indexes = (
            (("cluster", "workload_uid", "pod_uid"), True),
            (("cluster", "pod_uid"), False),
        )


class NodeContainer(LensModel):
    """A container seen on a node, with its pod and last status."""

    container_id = peewee.CharField(max_length=128)
    container_name = _text(NAME)
    pod_uid = _text(UID)
    pod_name = _text(NAME)
    pod_namespace = _text(NAMESPACE)
    status = _text(32)
    node_name = _text(NAME)
    source = _text(32)
    exit_code = peewee.IntegerField(null=True)
    created_at = _created()
    updated_at = _created()

    class Meta:
        table_name = "node_containers"
        indexes = (
            (("cluster", "container_id"), True),
            (("cluster", "pod_uid"), False),
        )


class NodeContainerDevice(LensModel):
    """A GPU or RDMA device a container was given."""

    container_id = peewee.CharField(max_length=128)
    device_type = peewee.CharField(max_length=32)
    device_name = _text(128)
    device_no = peewee.IntegerField(default=0)
    device_uuid = peewee.CharField(max_length=128)
    created_at = _created()
    updated_at = _created()

    class Meta:
        table_name = "node_container_devices"
        indexes = ((("cluster", "container_id", "device_type", "device_uuid"), True),)


class NodeContainerEvent(LensModel):
    """A lifecycle event of a container (created, started, exited, OOM-killed, deleted)."""

    APPEND_ONLY = True

    container_id = peewee.CharField(max_length=128)
    event_type = peewee.CharField(max_length=32)
    exit_code = peewee.IntegerField(null=True)
    created_at = _created()

    class Meta:
        table_name = "node_container_events"
        indexes = (
            (("cluster", "container_id", "event_type", "created_at"), True),
            (("created_at",), False),
        )


class EventStream(LensModel):
    """How far the event server has committed one node agent's records (per agent boot)."""

    node_name = peewee.CharField(max_length=NAME)
    boot_id = peewee.CharField(max_length=64)
    committed_sequence = peewee.BigIntegerField()
    created_at = _created()
    updated_at = _created()

    class Meta:
        table_name = "event_streams"
        indexes = (
            (("cluster", "node_name", "boot_id"), True),
            (("updated_at",), False),
        )


class TrainingPerformance(LensModel):
    """One training iteration's figures parsed from a workload's log."""

    APPEND_ONLY = True

    pod_uuid = _text(UID)
    workload_uid = peewee.CharField(max_length=UID)
    serial = peewee.IntegerField(default=1)
    iteration = peewee.BigIntegerField()
    performance = JsonField(null=True)
    created_at = _created()

    class Meta:
        table_name = "training_performance"
        indexes = (
            (("cluster", "workload_uid", "serial", "iteration"), True),
            (("cluster", "workload_uid", "created_at"), False),
            (("created_at",), False),
        )


class WorkloadEvent(LensModel):
    """A training milestone of a workload (StartTrain) with its run serial."""

    APPEND_ONLY = True

    workload_uid = peewee.CharField(max_length=UID)
    type = peewee.CharField(max_length=64)
    run_serial = peewee.IntegerField(default=1)
    pod_uid = _text(UID)
    nearest_workload_uid = _text(UID)
    created_at = _created()

    class Meta:
        table_name = "workload_events"
        indexes = (
            (("cluster", "workload_uid", "type", "run_serial"), True),
            (("cluster", "nearest_workload_uid"), False),
            (("created_at",), False),
        )


class Storage(LensModel):
    """A storage backend found by the storage scan (JuiceFS...)."""

    name = peewee.CharField(max_length=NAME)
    kind = peewee.CharField(max_length=64)
    config = JsonField(null=True)
    source = _text(64)
    status = _text(64)
    created_at = _created()
    updated_at = _created()
    deleted_at = UtcDateTimeField(null=True)

    class Meta:
        table_name = "storage"
        indexes = ((("cluster", "kind", "name"), True),)


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
)

APPEND_ONLY_MODELS: tuple[type[LensModel], ...] = tuple(m for m in ALL_MODELS if m.APPEND_ONLY)


def natural_key(model: type[LensModel]) -> tuple[peewee.Field[Any], ...]:
    """The columns of the model's unique index, which upserts conflict on."""
    for index in model._meta.indexes:
        columns, unique = index
        if unique:
            return tuple(model._meta.fields[name] for name in columns)
    raise LookupError(f"{model.__name__} has no unique natural key")
