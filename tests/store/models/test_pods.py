from __future__ import annotations

from lens.store.models import pods

from .conftest import check_tables


def test_tables_and_their_natural_keys() -> None:
    check_tables(
        [
            (pods.GpuPod, "gpu_pods", ("cluster", "uid"), False),
            (
                pods.GpuPodEvent,
                "gpu_pods_events",
                ("cluster", "pod_uuid", "event_type", "status", "created_at"),
                True,
            ),
            (pods.PodResource, "pod_resources", ("cluster", "uid"), False),
            (pods.PodSnapshot, "pod_snapshots", ("cluster", "pod_uid", "resource_version"), True),
        ]
    )
