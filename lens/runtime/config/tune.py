"""The `tune` config section: the node tuning policy and how `lens tune` keeps a node to it."""

from __future__ import annotations

import dataclasses

from lens.runtime.settings import setting


def _check_relative(value: object) -> str | None:
    relative = isinstance(value, str) and bool(value) and not value.startswith("/")
    if relative and ".." not in str(value).split("/"):
        return None
    return "expected a path relative to the host root, without .."


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TuneConfig:
    """Node tuning (docs/tune.md): sysctls and open-file limits checked, applied and kept."""

    policy_file: str = setting(
        "",
        "YAML tuning policy (the DaemonSet mounts a ConfigMap here; re-read when it changes); "
        "empty: the built-in one, vm.max_map_count at least 262144 and nofile at least 131072.",
        path=True,
    )
    node_labels: str = setting(
        "",
        "This node's labels as k=v,... (they select the policy's profiles); labels read from "
        "the Kubernetes API for node_name are added over them.",
    )
    node_name: str = setting(
        "",
        "Name of this node (set LENS_TUNE__NODE_NAME from spec.nodeName in the DaemonSet): the "
        "daemon reads its labels from the Kubernetes API; empty: node_labels only.",
    )
    labels_refresh_seconds: float = setting(
        60.0, "How often the daemon re-reads its node's labels.", minimum=5.0, maximum=86_400.0
    )
    interval_seconds: float = setting(
        2.0,
        "How often the daemon compares the node with the policy (file changes are seen at once "
        "through inotify; live sysctls only by this check).",
        minimum=0.2,
        maximum=3600.0,
    )
    repair: bool = setting(
        True, "The daemon puts back what drifted; false: it only reports drift in its metrics."
    )
    record_file: str = setting(
        "var/lib/lens/tune/record.json",
        "Where, under the host root, Lens records what it changed for `lens tune restore`.",
        check=_check_relative,
    )
