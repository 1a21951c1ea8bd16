"""`lens jobs`' multi-cluster storage config (the original's multi-cluster-config-exporter,
REFERENCE.md 13): every cluster's jobs.storage_config_secret gathered into
jobs.multi_storage_config_secret of this cluster (lens/storage/gathering.py), on the leader only,
when that Secret is configured. The clusters are this one and those of controller.clusters_secret.
"""

from __future__ import annotations

from collections.abc import Callable

import kubernetes

from lens.roles.jobs.kubestorage import ClusterClients, KubeSecrets
from lens.roles.jobs.leading import add_leader_loop
from lens.runtime.config import Config
from lens.runtime.process import Process
from lens.runtime.selfmetrics import SelfMetrics
from lens.storage.gathering import Gathering, GatherOutcome
from lens.storage.secrets import SecretRef


class MultiStorageGauges:
    def __init__(self, metrics: SelfMetrics) -> None:
        self.clusters = metrics.gauge(
            "lens_multi_storage_clusters",
            "Clusters whose storage config the last gathering read (result success) or could "
            "not read (result error).",
            ("result",),
        )

    def show(self, outcome: GatherOutcome) -> None:
        self.clusters.labels("success").set(len(outcome.gathered))
        self.clusters.labels("error").set(len(outcome.failed))


class MultiStorage:
    """The loop's body."""

    def __init__(
        self, gathering: Gathering, *, clusters: ClusterClients, gauges: MultiStorageGauges
    ) -> None:
        self.gathering = gathering
        self.clusters = clusters
        self._gauges = gauges
        self.last: GatherOutcome | None = None

    def run(self) -> None:
        outcome = self.gathering.run(self.clusters.targets())
        self._gauges.show(outcome)
        self.last = outcome


def add(
    config: Config,
    process: Process,
    *,
    api: kubernetes.client.ApiClient,
    leading: Callable[[], bool],
) -> MultiStorage | None:
    """The gathering loop, run by the leader only; None when jobs.multi_storage_config_secret
    is not set."""
    if not config.jobs.multi_storage_config_secret:
        return None
    home = config.cluster.name
    gathering = Gathering(
        home=KubeSecrets(api, cluster=home),
        config_secret=SecretRef.parse(config.jobs.storage_config_secret),
        aggregate_secret=SecretRef.parse(config.jobs.multi_storage_config_secret),
    )
    clusters = ClusterClients(api, home=home, clusters_secret=config.controller.clusters_secret)
    body = MultiStorage(gathering, clusters=clusters, gauges=MultiStorageGauges(process.metrics))
    add_leader_loop(
        process,
        name="multi-storage",
        interval_seconds=config.jobs.multi_storage_interval_seconds,
        run=body.run,
        leading=leading,
    )
    return body
