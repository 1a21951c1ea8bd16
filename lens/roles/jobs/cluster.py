"""`lens jobs`' view of the cluster: watch caches of nodes and pods (on every replica, so a new
leader starts with them listed), when `jobs.watch_cluster` and the kube section allow."""

from __future__ import annotations

import logging

import kubernetes

from lens.kube.cluster.caches import ClusterCaches
from lens.kube.machinery import clients
from lens.kube.machinery.reflector import watch_settings
from lens.runtime import errors
from lens.runtime.config import Config
from lens.runtime.process import Process

log = logging.getLogger(__name__)


def _api(config: Config) -> kubernetes.client.ApiClient | None:
    try:
        return clients.connect(config.kube)
    except errors.ConfigError as exc:
        if config.jobs.watch_cluster == "on":
            raise
        log.warning(
            "no Kubernetes API found: the jobs reading the cluster do not run "
            "(set the kube section, or jobs.watch_cluster: off to say so)",
            extra={"reason": str(exc)},
        )
        return None


def add(
    config: Config, process: Process, *, api: kubernetes.client.ApiClient | None = None
) -> ClusterCaches | None:
    """The caches added to `process`; None when the cluster is not watched. `api`: the
    Kubernetes API to watch (default: per config.kube)."""
    if config.jobs.watch_cluster == "off":
        return None
    api = api or _api(config)
    if api is None:
        return None
    caches = ClusterCaches(api, watch=watch_settings(config.kube))
    process.add_part(caches)
    process.health.add_readiness("cluster_caches", caches.check)
    return caches
