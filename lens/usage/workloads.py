"""Pods' places in the workload hierarchy, from the controller's tables (gpu_pods,
gpu_workloads): the top-level workload a pod works for, what the usage figures are grouped by."""

from __future__ import annotations

from collections.abc import Iterable

from lens.store import database, models

# A workload hierarchy deeper than this is cut (a PyTorchJob's pods sit two or three deep).
_MAX_DEPTH = 10


def top_workloads(cluster: str, pod_uids: Iterable[str]) -> dict[str, str]:
    """Each pod's top-level workload uid, from gpu_pods and gpu_workloads ('' unknown)."""
    pods = models.GpuPod
    uids = sorted(set(pod_uids))
    owner: dict[str, str] = {
        uid: owner_uid
        for uid, owner_uid in database.tuple_rows(
            pods.select(pods.uid, pods.owner_uid)
            .where((pods.cluster == cluster) & pods.uid.in_(uids))
            .tuples()
        )
    }
    top = dict(owner)
    workloads = models.GpuWorkload
    for _ in range(_MAX_DEPTH):
        current = {w for w in top.values() if w}
        if not current:
            break
        parents: dict[str, str] = {
            uid: parent
            for uid, parent in database.tuple_rows(
                workloads.select(workloads.uid, workloads.parent_uid)
                .where((workloads.cluster == cluster) & workloads.uid.in_(sorted(current)))
                .tuples()
            )
            if parent
        }
        if not parents:
            break
        top = {pod: parents.get(w, w) for pod, w in top.items()}
    return {uid: top.get(uid, "") for uid in uids}
