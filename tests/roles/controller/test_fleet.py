"""The fleet starts clusters' watches only while leading, and swaps a cluster whose client
changed (its Secret was edited)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import kubernetes

from lens.kube.workloads.clustersync import ClusterSync
from lens.roles.controller.fleet import ClusterTarget, Fleet


class Recorded:
    """Stands in for a ClusterSync: records what the fleet does with it."""

    def __init__(self, cluster: str, api: Any, log: list[str]) -> None:
        self.cluster = cluster
        self.cluster_api = api
        self._log = log

    def start(self) -> None:
        self._log.append(f"start {self.cluster}")

    def stop(self) -> None:
        self._log.append(f"stop {self.cluster}")

    def listed(self) -> bool:
        return True


def test_watches_run_only_while_leading(eventually: Callable[..., None]) -> None:
    log: list[str] = []
    fleet = Fleet(lambda name, api: cast(ClusterSync, Recorded(name, api, log)))
    home, other = kubernetes.client.ApiClient(), kubernetes.client.ApiClient()
    fleet.set_targets([ClusterTarget("home", home), ClusterTarget("east", other)])
    fleet.start()
    try:
        assert fleet.listed(), "a follower has nothing to list"
        fleet.lead()
        eventually(lambda: sorted(log) == ["start east", "start home"])
        assert fleet.listed() and len(fleet.syncs()) == 2
        replaced = kubernetes.client.ApiClient()
        fleet.set_targets([ClusterTarget("home", home), ClusterTarget("east", replaced)])
        eventually(lambda: log[2:] == ["stop east", "start east"])
        assert {s.cluster_api for s in fleet.syncs()} == {home, replaced}
        fleet.set_targets([ClusterTarget("home", home)])
        eventually(lambda: log[4:] == ["stop east"])
        fleet.follow()
        eventually(lambda: log[5:] == ["stop home"])
        assert fleet.syncs() == [] and not fleet.leading
    finally:
        fleet.close()
