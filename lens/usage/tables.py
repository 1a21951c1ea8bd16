"""The device report tables as the usage jobs read them: a container's share of a GPU-minute
(gpu_minute_holders) beside that GPU-minute's figures (gpu_minutes)."""

from __future__ import annotations

import peewee

from lens.store import models

HELD = models.GpuMinuteHolder
GPU = models.GpuMinuteReport


def held_with_gpu_minute(
    query: peewee.ModelSelect[models.GpuMinuteHolder],
) -> peewee.ModelSelect[models.GpuMinuteHolder]:
    """`query` over HELD joined with the GPU-minute each row is a share of."""
    return query.join(
        GPU,
        on=(
            (GPU.cluster == HELD.cluster)
            & (GPU.node_name == HELD.node_name)
            & (GPU.minute == HELD.minute)
            & (GPU.gpu_uuid == HELD.gpu_uuid)
        ),
    )
