"""A holder row read beside its GPU-minute."""

from __future__ import annotations

import peewee

from lens.usage import tables

from .conftest import Minutes


def test_a_share_is_read_with_the_figures_of_its_gpu_minute(
    db: peewee.Database, held: Minutes
) -> None:
    held.held(0, [0.25], pod="train-0", uuid="GPU-0")
    held.held(0, [0.75], pod="train-1", uuid="GPU-1")
    query = tables.held_with_gpu_minute(
        tables.HELD.select(tables.HELD.pod_name, tables.GPU.utilization_mean_ratio)
    ).order_by(tables.HELD.pod_name)
    assert list(query.tuples()) == [("train-0", 0.25), ("train-1", 0.75)]
