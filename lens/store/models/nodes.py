"""Nodes and their devices: nodes, gpu_devices, rdma_devices, node_device_changelog."""

from __future__ import annotations

import peewee

from lens.store.fields import UtcDateTimeField
from lens.store.models.base import NAME, LensModel, created, text


class Node(LensModel):
    """A GPU node as the jobs see it (node_info job)."""

    name = peewee.CharField(max_length=NAME)
    address = text(64)
    gpu_name = text(128)
    gpu_allocation = peewee.IntegerField(default=0)
    gpu_count = peewee.IntegerField(default=0)
    gpu_utilization = peewee.DoubleField(null=True)
    status = text(64)
    cpu = text(128)
    cpu_count = peewee.IntegerField(default=0)
    memory = text(64)
    k8s_version = text(64)
    k8s_status = text(64)
    kubelet_version = text(64)
    containerd_version = text(128)
    os = text(128)
    driver_version = text(64)
    created_at = created()
    updated_at = created()

    class Meta:
        table_name = "nodes"
        indexes = ((("cluster", "name"), True),)


class GpuDevice(LensModel):
    """One GPU of a node with its last known static facts and readings."""

    node_name = peewee.CharField(max_length=NAME)
    gpu_id = peewee.IntegerField()
    gpu_model = text(128)
    memory = peewee.BigIntegerField(default=0)  # VRAM in MiB, as the original
    utilization = peewee.DoubleField(null=True)
    temperature = peewee.DoubleField(null=True)
    power = peewee.DoubleField(null=True)
    serial = text(128)
    numa_node = peewee.IntegerField(null=True)
    numa_affinity = peewee.IntegerField(null=True)
    created_at = created()
    updated_at = created()

    class Meta:
        table_name = "gpu_devices"
        indexes = ((("cluster", "node_name", "gpu_id"), True),)


class RdmaDevice(LensModel):
    """One RDMA device of a node; removed devices keep their row with deleted_at set."""

    node_name = peewee.CharField(max_length=NAME)
    ifname = peewee.CharField(max_length=64)
    node_guid = text(64)
    if_index = peewee.IntegerField(default=0)
    fw = text(64)
    node_type = text(64)
    created_at = created()
    updated_at = created()
    deleted_at = UtcDateTimeField(null=True)

    class Meta:
        table_name = "rdma_devices"
        indexes = ((("cluster", "node_name", "ifname"), True),)


class NodeDeviceChangelog(LensModel):
    """A GPU or RDMA device appearing on (CREATE) or leaving (DELETE) a node."""

    APPEND_ONLY = True

    node_name = peewee.CharField(max_length=NAME)
    device_type = peewee.CharField(max_length=32)
    device_name = text(256)
    device_uuid = peewee.CharField(max_length=128)
    op = peewee.CharField(max_length=32)
    created_at = created()

    class Meta:
        table_name = "node_device_changelog"
        indexes = (
            (("cluster", "node_name", "device_type", "device_uuid", "op", "created_at"), True),
            (("created_at",), False),
        )
