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
    memory_bytes = peewee.BigIntegerField(null=True)
    kernel_version = text(128)
    taints = peewee.TextField(default="[]")  # JSON list of {key, value, effect}
    created_at = created()
    updated_at = created()

    class Meta:
        table_name = "nodes"
        indexes = ((("cluster", "name"), True),)


# Column sizes of the facts: what lens/reports/inventorywire.py fits texts to on the wire.
DEVICE_UUID = 128
DEVICE_NAME = 128  # a model, serial, firmware, VBIOS, board id or RDMA device name
DEVICE_SHORT = 64  # vendor, PCI address, GUIDs, partition modes, driver version, node type
# The JSON texts (netdevs, ports) and a changelog row's changes, in ASCII characters: they stay
# under MariaDB's TEXT (65,535 bytes).
DEVICE_JSON = 60_000
CHANGES = 16_000


class GpuDevice(LensModel):
    """One GPU of a node, by its uuid, with its last reported facts (lens jobs, storing/devices.py).

    A GPU that left the node keeps its row with deleted_at set, and gets it back cleared when it
    returns. utilization, temperature, power and numa_affinity are the original's readings
    columns, which the inventory does not fill. memory is vram_bytes in MiB, as the original.
    """

    node_name = peewee.CharField(max_length=NAME)
    uuid = peewee.CharField(max_length=DEVICE_UUID)
    gpu_id = peewee.IntegerField()  # the index the node gives it (-1: unknown)
    vendor = text(DEVICE_SHORT)
    gpu_model = text(DEVICE_NAME)
    serial = text(DEVICE_NAME)
    pci_bus_id = text(DEVICE_SHORT)
    vbios = peewee.CharField(max_length=DEVICE_NAME, null=True)
    vram_bytes = peewee.BigIntegerField(null=True)
    memory = peewee.BigIntegerField(null=True)  # VRAM in MiB, as the original
    numa_node = peewee.IntegerField(null=True)
    compute_partition = peewee.CharField(max_length=DEVICE_SHORT, null=True)
    memory_partition = peewee.CharField(max_length=DEVICE_SHORT, null=True)
    driver_version = peewee.CharField(max_length=DEVICE_SHORT, null=True)
    health = peewee.CharField(max_length=DEVICE_NAME, null=True)  # "degraded: throttle_thermal"
    utilization = peewee.DoubleField(null=True)
    temperature = peewee.DoubleField(null=True)
    power = peewee.DoubleField(null=True)
    numa_affinity = peewee.IntegerField(null=True)
    created_at = created()
    updated_at = created()
    deleted_at = UtcDateTimeField(null=True)

    class Meta:
        table_name = "gpu_devices"
        indexes = (
            (("cluster", "node_name", "uuid"), True),
            (("cluster", "updated_at"), False),
        )


class RdmaDevice(LensModel):
    """One RDMA device of a node, by its name, with its last reported facts; removed devices
    keep their row with deleted_at set.

    netdevs is a JSON list of names; ports a JSON list of objects (port, state, physical_state,
    link_layer, rate_bytes_per_second, netdev) in port order. if_index is the original's, which
    the inventory does not carry.
    """

    node_name = peewee.CharField(max_length=NAME)
    ifname = peewee.CharField(max_length=DEVICE_NAME)
    node_guid = peewee.CharField(max_length=DEVICE_SHORT, null=True)
    sys_image_guid = peewee.CharField(max_length=DEVICE_SHORT, null=True)
    if_index = peewee.IntegerField(null=True)
    fw = peewee.CharField(max_length=DEVICE_NAME, null=True)
    node_type = peewee.CharField(max_length=DEVICE_SHORT, null=True)
    hca_type = peewee.CharField(max_length=DEVICE_SHORT, null=True)
    board_id = peewee.CharField(max_length=DEVICE_NAME, null=True)
    pci_bus_id = peewee.CharField(max_length=DEVICE_SHORT, null=True)
    numa_node = peewee.IntegerField(null=True)
    netdevs = peewee.TextField(default="[]")
    ports = peewee.TextField(default="[]")
    created_at = created()
    updated_at = created()
    deleted_at = UtcDateTimeField(null=True)

    class Meta:
        table_name = "rdma_devices"
        indexes = ((("cluster", "node_name", "ifname"), True),)


class NodeDeviceChangelog(LensModel):
    """A GPU or RDMA device appearing on (CREATE), changing on (UPDATE) or leaving (DELETE) a node.

    device_type is gpu or rdma. A GPU is device_uuid (its uuid) with device_name its model; an
    RDMA device is device_name (its name) with device_uuid its node GUID. changes names what an
    UPDATE changed (`serial: "A" -> "B"; ports[1].state: "ACTIVE" -> "DOWN"`), empty otherwise.
    created_at is the time of the inventory that told. The id in the key keeps two changes of
    one node at one time apart.
    """

    APPEND_ONLY = True

    node_name = peewee.CharField(max_length=NAME)
    device_type = peewee.CharField(max_length=32)
    device_name = text(256)
    device_uuid = peewee.CharField(max_length=128)
    op = peewee.CharField(max_length=32)
    changes = peewee.TextField(default="")
    created_at = created()

    class Meta:
        table_name = "node_device_changelog"
        indexes = (
            (("cluster", "node_name", "created_at", "id"), True),
            (("created_at",), False),
        )
