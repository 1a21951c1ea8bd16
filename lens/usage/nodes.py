"""What the agents' reports say of each node now: its GPUs' mean utilization in one minute, and
the GPU model and driver version of its inventory (for the nodes table)."""

from __future__ import annotations

import datetime
from typing import Any

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


def _greatest(cluster: str, fact: peewee.Field[Any]) -> dict[str, str]:
    """Per node, the greatest non-empty value of a fact of its present GPUs."""
    device = models.GpuDevice
    query = (
        device.select(device.node_name, peewee.fn.MAX(fact))
        .where((device.cluster == cluster) & device.deleted_at.is_null() & fact.is_null(False))
        .group_by(device.node_name)
        .tuples()
    )
    return {str(node): str(value) for node, value in database.tuple_rows(query) if value}


def gpu_models(cluster: str) -> dict[str, str]:
    """Per node, the model its present GPUs report (the greatest, should they differ): the
    name the GPU gives itself ("AMD Instinct MI300X"), where a node label must spell it
    without spaces ("AMD_Instinct_MI300X")."""
    return _greatest(cluster, models.GpuDevice.gpu_model)


def driver_versions(cluster: str) -> dict[str, str]:
    """Per node, the driver version its present GPUs report (the greatest, should they differ)."""
    return _greatest(cluster, models.GpuDevice.driver_version)
