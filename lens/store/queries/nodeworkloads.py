"""Read what ran on a node (gpu_pods, pod_resources, workload_pod_references, gpu_workloads) for
the API's /v1/nodes/{name}/workloads (running, by top-level workload) and workloadsHistory
(finished pods), each page cut in SQL.

A pod nothing owns stands for itself (kind Pod), as in the consumers (lens/usage/consumers.py):
the original left such pods out of the first list and crashed on them in the second
(REFERENCE.md 15.1 #7). A node is known when the `nodes` table or `gpu_pods` has it.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping

import peewee

from lens.store import database, models
from lens.store.queries.reading import Page, reading

BARE_KIND = "Pod"  # the kind shown for a pod nothing owns
FINISHED = ("Succeeded", "Failed")
PENDING = "Pending"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeWorkload:
    """A top-level workload with running GPU pods on the node (or such a pod nothing owns)."""

    uid: str
    kind: str
    name: str
    namespace: str
    status: str
    gpus_on_node: int  # GPUs of its running pods on this node
    gpus: int  # GPUs of all its running pods


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeWorkloadPage:
    rows: tuple[NodeWorkload, ...]
    total: int


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FinishedPod:
    """A GPU pod that ran on the node and ended, with its top-level workload (the pod itself,
    kind Pod, when it has none or it is not stored)."""

    pod_uid: str
    pod_name: str
    pod_namespace: str
    gpus: int
    created_at: datetime.datetime
    end_at: datetime.datetime | None  # its finish or deletion; None: not recorded
    workload_uid: str
    workload_kind: str
    workload_name: str
    workload_namespace: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FinishedPodPage:
    rows: tuple[FinishedPod, ...]
    total: int


def _known(cluster: str, node_name: str) -> bool:
    node, pod = models.Node, models.GpuPod
    listed = node.select().where((node.cluster == cluster) & (node.name == node_name)).exists()
    return bool(listed) or bool(
        pod.select().where((pod.cluster == cluster) & (pod.node_name == node_name)).exists()
    )


def _by_top_workload(cluster: str, node_name: str) -> peewee.ModelSelect[models.GpuPod]:
    """The node's running GPU pods grouped by their top-level workload: each pod joined with
    the one workload of its chain that nothing owns, a pod nothing owns with none."""
    pod, refs, top = models.GpuPod, models.WorkloadPodReference, models.GpuWorkload
    key = peewee.fn.COALESCE(top.uid, pod.uid)
    name = peewee.fn.MAX(peewee.fn.COALESCE(top.name, pod.name))
    return (
        pod.select(
            key,
            peewee.fn.MAX(peewee.fn.COALESCE(top.kind, BARE_KIND)),
            name,
            peewee.fn.MAX(peewee.fn.COALESCE(top.namespace, pod.namespace)),
            peewee.fn.MAX(peewee.fn.COALESCE(top.status, pod.phase)),
            peewee.fn.SUM(pod.gpu_allocated),
        )
        .join(
            refs,
            peewee.JOIN.LEFT_OUTER,
            on=(refs.cluster == pod.cluster) & (refs.pod_uid == pod.uid),
        )
        .join(
            top,
            peewee.JOIN.LEFT_OUTER,
            on=(top.cluster == refs.cluster)
            & (top.uid == refs.workload_uid)
            & (top.parent_uid == ""),
        )
        .where(
            (pod.cluster == cluster)
            & (pod.node_name == node_name)
            & pod.running
            & ~pod.deleted
            & (top.uid.is_null(False) | (pod.owner_uid == ""))
        )
        .group_by(key)
        .order_by(name, key)
    )


def _cluster_gpus(cluster: str, owners: list[str]) -> Mapping[str, int]:
    """GPUs of all the running pods of each workload in `owners` (a bare pod: its own)."""
    pod, refs = models.GpuPod, models.WorkloadPodReference
    live = (pod.cluster == cluster) & pod.running & ~pod.deleted
    owned = (
        pod.select(refs.workload_uid, peewee.fn.SUM(pod.gpu_allocated))
        .join(refs, on=(refs.cluster == pod.cluster) & (refs.pod_uid == pod.uid))
        .where(live & refs.workload_uid.in_(owners))
        .group_by(refs.workload_uid)
    )
    bare = pod.select(pod.uid, pod.gpu_allocated).where(live & pod.uid.in_(owners))
    found: dict[str, int] = {}
    for query in (owned, bare):
        found.update((str(o), int(g or 0)) for o, g in database.tuple_rows(query.tuples()))
    return found


def node_workloads(
    db: peewee.Database, *, cluster: str, node_name: str, page: Page
) -> NodeWorkloadPage | None:
    """A page of the top-level workloads running GPU pods on the node, by name; None when the
    node is unknown."""
    grouped = _by_top_workload(cluster, node_name)
    query = grouped.offset(page.offset).limit(page.limit).tuples()
    with reading(db):
        if not _known(cluster, node_name):
            return None
        rows = list(database.tuple_rows(query))
        gpus = _cluster_gpus(cluster, [str(r[0]) for r in rows]) if rows else {}
        total = grouped.count()
    return NodeWorkloadPage(
        rows=tuple(
            NodeWorkload(
                uid=str(uid),
                kind=str(kind),
                name=str(name),
                namespace=str(namespace),
                status=str(status),
                gpus_on_node=int(on_node or 0),
                gpus=gpus.get(str(uid), int(on_node or 0)),
            )
            for uid, kind, name, namespace, status, on_node in rows
        ),
        total=total,
    )


def _tops(cluster: str, pod_uids: list[str]) -> Mapping[str, tuple[str, str, str, str]]:
    """Each pod's top-level workload (uid, kind, name, namespace), where one is stored."""
    refs, top = models.WorkloadPodReference, models.GpuWorkload
    query = (
        refs.select(refs.pod_uid, top.uid, top.kind, top.name, top.namespace)
        .join(top, on=(top.cluster == refs.cluster) & (top.uid == refs.workload_uid))
        .where((refs.cluster == cluster) & refs.pod_uid.in_(pod_uids) & (top.parent_uid == ""))
        .tuples()
    )
    return {
        str(p): (str(u), str(k), str(n), str(ns)) for p, u, k, n, ns in database.tuple_rows(query)
    }


def node_history(
    db: peewee.Database, *, cluster: str, node_name: str, page: Page
) -> FinishedPodPage | None:
    """A page of the node's GPU pods that ran and ended, newest first; None when the node is
    unknown. A pod deleted while Pending never ran there and is left out, as the original did."""
    pod, resource = models.GpuPod, models.PodResource
    where = (
        (pod.cluster == cluster)
        & (pod.node_name == node_name)
        & ~pod.running
        & (pod.phase != PENDING)
        & (pod.deleted | pod.phase.in_(FINISHED))
    )
    query = (
        pod.select(
            pod.uid, pod.name, pod.namespace, pod.gpu_allocated, pod.created_at, resource.end_at
        )
        .join(
            resource,
            peewee.JOIN.LEFT_OUTER,
            on=(resource.cluster == pod.cluster) & (resource.uid == pod.uid),
        )
        .where(where)
        .order_by(pod.created_at.desc(), pod.uid)
        .offset(page.offset)
        .limit(page.limit)
        .tuples()
    )
    with reading(db):
        if not _known(cluster, node_name):
            return None
        rows = list(database.tuple_rows(query))
        tops = _tops(cluster, [str(r[0]) for r in rows]) if rows else {}
        total = pod.select().where(where).count()
    found = []
    for uid, name, namespace, gpus, created_at, end_at in rows:
        top = tops.get(str(uid)) or (str(uid), BARE_KIND, str(name), str(namespace))
        found.append(
            FinishedPod(
                pod_uid=str(uid),
                pod_name=str(name),
                pod_namespace=str(namespace),
                gpus=int(gpus),
                created_at=created_at,
                end_at=end_at,
                workload_uid=top[0],
                workload_kind=top[1],
                workload_name=top[2],
                workload_namespace=top[3],
            )
        )
    return FinishedPodPage(rows=tuple(found), total=total)
