from __future__ import annotations

from lens.kube.workloads.syncmetrics import SyncMetrics
from lens.runtime.selfmetrics import SelfMetrics


def test_every_series_is_per_cluster() -> None:
    metrics = SelfMetrics(process=False)
    SyncMetrics(metrics)
    names = {family.name: family for family in metrics.declared}
    assert "lens_controller_finalizers_forced_total" in names
    assert all("cluster" in family.labels for family in names.values())
