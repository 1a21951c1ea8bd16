from __future__ import annotations

import pytest

from lens.store.models import base, workloads


@pytest.mark.parametrize(
    ("model", "table", "key", "append_only"),
    [
        (workloads.GpuWorkload, "gpu_workloads", ("cluster", "uid"), False),
        (
            workloads.GpuWorkloadSnapshot,
            "gpu_workload_snapshots",
            ("cluster", "uid", "resource_version"),
            True,
        ),
        (
            workloads.TrainingPerformance,
            "training_performance",
            ("cluster", "workload_uid", "serial", "iteration"),
            True,
        ),
        (
            workloads.WorkloadEvent,
            "workload_events",
            ("cluster", "workload_uid", "type", "run_serial"),
            True,
        ),
        (
            workloads.WorkloadPodReference,
            "workload_pod_references",
            ("cluster", "workload_uid", "pod_uid"),
            False,
        ),
    ],
)
def test_tables_and_their_natural_keys(
    model: type[base.LensModel], table: str, key: tuple[str, ...], append_only: bool
) -> None:
    assert model._meta.table_name == table
    assert tuple(f.name for f in base.natural_key(model)) == key
    assert model.APPEND_ONLY is append_only
