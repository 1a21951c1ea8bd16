"""What the agents' reports say of each node now: its GPUs' mean utilization in one minute and
the GPU driver version of its inventory (for the nodes table)."""

from __future__ import annotations

import datetime

import peewee

from lens.store import database, models


def utilization_percent(cluster: str, minute: datetime.datetime) -> dict[str, float]:
    """Per node, the mean utilization (percent) of its GPUs known in `minute`."""
    gpu = models.GpuMinuteReport
    query = (
        gpu.select(gpu.node_name, peewee.fn.AVG(gpu.utilization_mean_ratio))
        .where(
            (gpu.cluster == cluster)
            & (gpu.minute == minute)
            & gpu.utilization_mean_ratio.is_null(False)
        )
        .group_by(gpu.node_name)
        .tuples()
    )
    return {str(node): 100.0 * float(mean) for node, mean in database.tuple_rows(query)}


def gpu_models(cluster: str) -> dict[str, str]:
    """Per node, the model its present GPUs report (the greatest, should they differ): the
    name the GPU gives itself ("AMD Instinct MI300X"), where a node label must spell it
    without spaces ("AMD_Instinct_MI300X")."""
    device = models.GpuDevice
    query = (
        device.select(device.node_name, peewee.fn.MAX(device.gpu_model))
        .where(
            (device.cluster == cluster)
            & device.deleted_at.is_null()
            & device.gpu_model.is_null(False)
            & (device.gpu_model != "")
        )
        .group_by(device.node_name)
        .tuples()
    )
    return {str(node): str(model) for node, model in database.tuple_rows(query) if model}


def driver_versions(cluster: str) -> dict[str, str]:
    """Per node, the driver version its present GPUs report (the greatest, should they differ)."""
    device = models.GpuDevice
    query = (
        device.select(device.node_name, peewee.fn.MAX(device.driver_version))
        .where(
            (device.cluster == cluster)
            & device.deleted_at.is_null()
            & device.driver_version.is_null(False)
        )
        .group_by(device.node_name)
        .tuples()
    )
    return {str(node): str(version) for node, version in database.tuple_rows(query) if version}
