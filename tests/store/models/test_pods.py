from __future__ import annotations

import pytest

from lens.store.models import base, pods


@pytest.mark.parametrize(
    ("model", "table", "key", "append_only"),
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
    ],
)
def test_tables_and_their_natural_keys(
    model: type[base.LensModel], table: str, key: tuple[str, ...], append_only: bool
) -> None:
    assert model._meta.table_name == table
    assert tuple(f.name for f in base.natural_key(model)) == key
    assert model.APPEND_ONLY is append_only
