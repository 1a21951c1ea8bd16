from __future__ import annotations

from lens.store.models import workloads

from .conftest import check_tables


def test_tables_and_their_natural_keys() -> None:
    check_tables(
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
        ]
    )
