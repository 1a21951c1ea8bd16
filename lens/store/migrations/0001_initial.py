"""0001: the first schema, every table of REFERENCE.md section 4 with natural keys and indexes.

The models below are a frozen copy of store/models/ as of this migration, as playhouse.migrations
asks: later changes to the models come as new migrations, never as edits here. Column defaults are
left out because peewee applies them in Python, not in the DDL.
"""

from __future__ import annotations

from typing import Any

import peewee


class JsonField(peewee.Field):
    field_type = "JSON"  # lens.store.fields.JSON_FIELD_TYPE when this migration was written


class UtcDateTimeField(peewee.Field):
    field_type = "DATETIME"  # lens.store.fields.DATETIME_FIELD_TYPE when this migration was written


def up(migrator: Any, db: peewee.Database) -> None:
    class GpuDevice(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        node_name = peewee.CharField(max_length=253)
        gpu_id = peewee.IntegerField()
        gpu_model = peewee.CharField(max_length=128)
        memory = peewee.BigIntegerField()
        utilization = peewee.DoubleField(null=True)
        temperature = peewee.DoubleField(null=True)
        power = peewee.DoubleField(null=True)
        serial = peewee.CharField(max_length=128)
        numa_node = peewee.IntegerField(null=True)
        numa_affinity = peewee.IntegerField(null=True)
        created_at = UtcDateTimeField()
        updated_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "gpu_devices"
            indexes = ((("cluster", "node_name", "gpu_id"), True),)

    db.create_tables([GpuDevice])

    class GpuPod(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        namespace = peewee.CharField(max_length=64)
        name = peewee.CharField(max_length=253)
        node_name = peewee.CharField(max_length=253)
        uid = peewee.CharField(max_length=64)
        gpu_allocated = peewee.IntegerField()
        phase = peewee.CharField(max_length=32)
        deleted = peewee.BooleanField()
        running = peewee.BooleanField()
        ip = peewee.CharField(max_length=64)
        owner_uid = peewee.CharField(max_length=64)
        created_at = UtcDateTimeField()
        updated_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "gpu_pods"
            indexes = ((("cluster", "uid"), True), (("cluster", "node_name", "running"), False))

    db.create_tables([GpuPod])

    class GpuPodEvent(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        pod_uuid = peewee.CharField(max_length=64)
        pod_phase = peewee.CharField(max_length=32)
        event_type = peewee.CharField(max_length=64)
        status = peewee.CharField(max_length=32)
        restart_count = peewee.IntegerField()
        created_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "gpu_pods_events"
            indexes = (
                (("cluster", "pod_uuid", "event_type", "status", "created_at"), True),
                (("created_at",), False),
            )

    db.create_tables([GpuPodEvent])

    class GpuWorkload(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        group_version = peewee.CharField(max_length=128)
        kind = peewee.CharField(max_length=64)
        namespace = peewee.CharField(max_length=64)
        name = peewee.CharField(max_length=253)
        uid = peewee.CharField(max_length=64)
        parent_uid = peewee.CharField(max_length=64)
        gpu_request = peewee.IntegerField()
        status = peewee.CharField(max_length=32)
        source = peewee.CharField(max_length=64)
        labels = JsonField(null=True)
        created_at = UtcDateTimeField()
        updated_at = UtcDateTimeField()
        end_at = UtcDateTimeField(null=True)
        deleted_at = UtcDateTimeField(null=True)

        class Meta:
            database = db
            table_name = "gpu_workloads"
            indexes = (
                (("cluster", "uid"), True),
                (("cluster", "parent_uid"), False),
                (("cluster", "status"), False),
                (("cluster", "end_at"), False),
            )

    db.create_tables([GpuWorkload])

    class GpuWorkloadSnapshot(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        uid = peewee.CharField(max_length=64)
        group_version = peewee.CharField(max_length=128)
        kind = peewee.CharField(max_length=64)
        name = peewee.CharField(max_length=253)
        namespace = peewee.CharField(max_length=64)
        metadata = JsonField(null=True)
        detail = JsonField(null=True)
        resource_version = peewee.BigIntegerField()
        created_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "gpu_workload_snapshots"
            indexes = ((("cluster", "uid", "resource_version"), True), (("created_at",), False))

    db.create_tables([GpuWorkloadSnapshot])

    class Node(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        name = peewee.CharField(max_length=253)
        address = peewee.CharField(max_length=64)
        gpu_name = peewee.CharField(max_length=128)
        gpu_allocation = peewee.IntegerField()
        gpu_count = peewee.IntegerField()
        gpu_utilization = peewee.DoubleField(null=True)
        status = peewee.CharField(max_length=64)
        cpu = peewee.CharField(max_length=128)
        cpu_count = peewee.IntegerField()
        memory = peewee.CharField(max_length=64)
        k8s_version = peewee.CharField(max_length=64)
        k8s_status = peewee.CharField(max_length=64)
        kubelet_version = peewee.CharField(max_length=64)
        containerd_version = peewee.CharField(max_length=128)
        os = peewee.CharField(max_length=128)
        driver_version = peewee.CharField(max_length=64)
        created_at = UtcDateTimeField()
        updated_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "nodes"
            indexes = ((("cluster", "name"), True),)

    db.create_tables([Node])

    class NodeContainer(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        container_id = peewee.CharField(max_length=128)
        container_name = peewee.CharField(max_length=253)
        pod_uid = peewee.CharField(max_length=64)
        pod_name = peewee.CharField(max_length=253)
        pod_namespace = peewee.CharField(max_length=64)
        status = peewee.CharField(max_length=32)
        node_name = peewee.CharField(max_length=253)
        source = peewee.CharField(max_length=32)
        created_at = UtcDateTimeField()
        updated_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "node_containers"
            indexes = ((("cluster", "container_id"), True), (("cluster", "pod_uid"), False))

    db.create_tables([NodeContainer])

    class NodeContainerDevice(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        container_id = peewee.CharField(max_length=128)
        device_type = peewee.CharField(max_length=32)
        device_name = peewee.CharField(max_length=128)
        device_no = peewee.IntegerField()
        device_uuid = peewee.CharField(max_length=128)
        created_at = UtcDateTimeField()
        updated_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "node_container_devices"
            indexes = ((("cluster", "container_id", "device_type", "device_uuid"), True),)

    db.create_tables([NodeContainerDevice])

    class NodeContainerEvent(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        container_id = peewee.CharField(max_length=128)
        event_type = peewee.CharField(max_length=32)
        created_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "node_container_events"
            indexes = (
                (("cluster", "container_id", "event_type", "created_at"), True),
                (("created_at",), False),
            )

    db.create_tables([NodeContainerEvent])

    class NodeDeviceChangelog(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        node_name = peewee.CharField(max_length=253)
        device_type = peewee.CharField(max_length=32)
        device_name = peewee.CharField(max_length=256)
        device_uuid = peewee.CharField(max_length=128)
        op = peewee.CharField(max_length=32)
        created_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "node_device_changelog"
            indexes = (
                (("cluster", "node_name", "device_type", "device_uuid", "op", "created_at"), True),
                (("created_at",), False),
            )

    db.create_tables([NodeDeviceChangelog])

    class PodResource(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        uid = peewee.CharField(max_length=64)
        gpu_model = peewee.CharField(max_length=128)
        gpu_allocated = peewee.IntegerField()
        created_at = UtcDateTimeField()
        end_at = UtcDateTimeField(null=True)

        class Meta:
            database = db
            table_name = "pod_resources"
            indexes = ((("cluster", "uid"), True),)

    db.create_tables([PodResource])

    class PodSnapshot(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        pod_uid = peewee.CharField(max_length=64)
        pod_name = peewee.CharField(max_length=253)
        namespace = peewee.CharField(max_length=64)
        spec = JsonField(null=True)
        metadata = JsonField(null=True)
        status = JsonField(null=True)
        resource_version = peewee.BigIntegerField()
        created_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "pod_snapshots"
            indexes = ((("cluster", "pod_uid", "resource_version"), True), (("created_at",), False))

    db.create_tables([PodSnapshot])

    class RdmaDevice(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        node_name = peewee.CharField(max_length=253)
        ifname = peewee.CharField(max_length=64)
        node_guid = peewee.CharField(max_length=64)
        if_index = peewee.IntegerField()
        fw = peewee.CharField(max_length=64)
        node_type = peewee.CharField(max_length=64)
        created_at = UtcDateTimeField()
        updated_at = UtcDateTimeField()
        deleted_at = UtcDateTimeField(null=True)

        class Meta:
            database = db
            table_name = "rdma_devices"
            indexes = ((("cluster", "node_name", "ifname"), True),)

    db.create_tables([RdmaDevice])

    class Storage(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        name = peewee.CharField(max_length=253)
        kind = peewee.CharField(max_length=64)
        config = JsonField(null=True)
        source = peewee.CharField(max_length=64)
        status = peewee.CharField(max_length=64)
        created_at = UtcDateTimeField()
        updated_at = UtcDateTimeField()
        deleted_at = UtcDateTimeField(null=True)

        class Meta:
            database = db
            table_name = "storage"
            indexes = ((("cluster", "kind", "name"), True),)

    db.create_tables([Storage])

    class TrainingPerformance(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        pod_uuid = peewee.CharField(max_length=64)
        workload_uid = peewee.CharField(max_length=64)
        serial = peewee.IntegerField()
        iteration = peewee.BigIntegerField()
        performance = JsonField(null=True)
        created_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "training_performance"
            indexes = (
                (("cluster", "workload_uid", "serial", "iteration"), True),
                (("cluster", "workload_uid", "created_at"), False),
                (("created_at",), False),
            )

    db.create_tables([TrainingPerformance])

    class WorkloadEvent(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        workload_uid = peewee.CharField(max_length=64)
        type = peewee.CharField(max_length=64)
        run_serial = peewee.IntegerField()
        pod_uid = peewee.CharField(max_length=64)
        nearest_workload_uid = peewee.CharField(max_length=64)
        created_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "workload_events"
            indexes = (
                (("cluster", "workload_uid", "type", "run_serial"), True),
                (("cluster", "nearest_workload_uid"), False),
                (("created_at",), False),
            )

    db.create_tables([WorkloadEvent])

    class WorkloadPodReference(peewee.Model):
        id = peewee.BigAutoField()
        cluster = peewee.CharField(max_length=64)
        workload_uid = peewee.CharField(max_length=64)
        pod_uid = peewee.CharField(max_length=64)
        created_at = UtcDateTimeField()

        class Meta:
            database = db
            table_name = "workload_pod_references"
            indexes = (
                (("cluster", "workload_uid", "pod_uid"), True),
                (("cluster", "pod_uid"), False),
            )

    db.create_tables([WorkloadPodReference])
