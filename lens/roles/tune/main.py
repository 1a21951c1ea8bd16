"""`lens tune` with no subcommand: the tuning daemon of the tune DaemonSet.

`build()` adds the role to a process: the periodic check as a loop, the file watch as a part, the
node's labels read from the API when `tune.node_name` is set, the readiness check.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import kubernetes

from lens.kube.machinery import clients
from lens.roles.tune.daemon import TuneDaemon
from lens.roles.tune.nodelabels import NodeLabels
from lens.roles.tune.tunemetrics import TuneMetrics
from lens.roles.tune.watching import FileWatch
from lens.runtime.config import Config
from lens.runtime.launcher import Role
from lens.runtime.periodic import Loop
from lens.runtime.process import Process
from lens.tune import places, policyfile


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Tune:
    process: Process
    daemon: TuneDaemon
    watch: FileWatch
    labels: NodeLabels


def build(
    config: Config,
    process: Process,
    *,
    api: Callable[[], kubernetes.client.ApiClient] | None = None,
) -> Tune:
    """Add the daemon to `process`. A bad policy file or `tune.node_labels` is a ConfigError
    here; `api` makes the Kubernetes client (default: per config.kube)."""
    root = Path(config.host.root)
    policy = policyfile.PolicyFile(config.tune.policy_file)
    labels = NodeLabels(config.tune, api or (lambda: clients.connect(config.kube)))
    daemon = TuneDaemon(
        root=root,
        record_file=root / config.tune.record_file,
        policy=policy,
        labels=labels.current,
        repair=config.tune.repair,
        metrics=TuneMetrics(process.metrics),
        clock=process.clock,
    )
    folders = places.watched_folders(root)
    if config.tune.policy_file:
        folders += (Path(config.tune.policy_file).parent,)
    watch = FileWatch(folders, daemon.cycle)
    process.add_part(watch)
    process.add_loop(
        Loop(name="tune", interval_seconds=config.tune.interval_seconds, run=daemon.cycle)
    )
    if config.tune.node_name:
        process.add_loop(
            Loop(
                name="tune-node-labels",
                interval_seconds=config.tune.labels_refresh_seconds,
                run=lambda: _relabel(labels, daemon),
            )
        )
    process.health.add_readiness("tune", daemon.ready)
    return Tune(process=process, daemon=daemon, watch=watch, labels=labels)


def _relabel(labels: NodeLabels, daemon: TuneDaemon) -> None:
    """Labels select profiles: a change is checked at once."""
    if labels.refresh():
        daemon.cycle()


ROLE = Role(
    name="tune",
    starting="tuning daemon starting",
    sections=("host", "server", "tune"),
    build=build,
)
