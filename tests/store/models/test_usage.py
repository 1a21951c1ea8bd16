from __future__ import annotations

from lens.store.models import usage

from .conftest import check_tables


def test_idle_intervals_are_keyed_by_their_gpu_pod_and_start() -> None:
    check_tables(
        [
            (
                usage.GpuIdleInterval,
                "gpu_idle_intervals",
                ("cluster", "node_name", "gpu_uuid", "pod_uid", "started_at"),
                False,
            ),
            (
                usage.GpuHoursDaily,
                "gpu_hours_daily",
                ("cluster", "day", "group_kind", "group_key", "group_value", "gpu_model"),
                False,
            ),
        ]
    )
