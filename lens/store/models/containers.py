"""Containers on nodes, their devices and events, and the agents' event streams (jobs write
them)."""

from __future__ import annotations

import peewee

from lens.store.models.base import NAME, NAMESPACE, UID, LensModel, created, text


class NodeContainer(LensModel):
    """A container seen on a node, with its pod and last status."""

    container_id = peewee.CharField(max_length=128)
    container_name = text(NAME)
    pod_uid = text(UID)
    pod_name = text(NAME)
    pod_namespace = text(NAMESPACE)
    status = text(32)
    node_name = text(NAME)
    source = text(32)
    exit_code = peewee.IntegerField(null=True)
    created_at = created()
    updated_at = created()

    class Meta:
        table_name = "node_containers"
        indexes = (
            (("cluster", "container_id"), True),
            (("cluster", "pod_uid"), False),
            (("cluster", "updated_at"), False),
        )


class NodeContainerDevice(LensModel):
    """A GPU or RDMA device a container was given."""

    container_id = peewee.CharField(max_length=128)
    device_type = peewee.CharField(max_length=32)
    device_name = text(128)
    device_no = peewee.IntegerField(default=0)
    device_uuid = peewee.CharField(max_length=128)
    created_at = created()
    updated_at = created()

    class Meta:
        table_name = "node_container_devices"
        indexes = ((("cluster", "container_id", "device_type", "device_uuid"), True),)


class NodeContainerEvent(LensModel):
    """A lifecycle event of a container (created, started, exited, OOM-killed, deleted)."""

    APPEND_ONLY = True

    container_id = peewee.CharField(max_length=128)
    event_type = peewee.CharField(max_length=32)
    exit_code = peewee.IntegerField(null=True)
    created_at = created()

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
    created_at = created()
    updated_at = created()

    class Meta:
        table_name = "event_streams"
        indexes = (
            (("cluster", "node_name", "boot_id"), True),
            (("updated_at",), False),
        )
