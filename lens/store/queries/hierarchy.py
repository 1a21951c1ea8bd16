"""A workload and everything below it (gpu_workloads by parent_uid), for the API's
/v1/workloads/{uid}/hierarchy: one recursive query (SQLite, PostgreSQL, MariaDB 10.2+), where the
original made one query per workload of the tree (REFERENCE.md 15.3).

The depth is bounded (MAX_DEPTH levels below the workload), so rows whose parents form a cycle
end the walk instead of looping.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import peewee

from lens.store import database, models
from lens.store.queries.reading import reading

# Owner chains are a few levels deep (PyTorchJob -> pods; CronJob -> Job -> pods); the same
# guard as the controller's owner walk (kube/workloads/owners.py).
MAX_DEPTH = 16


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadNode:
    uid: str
    kind: str
    name: str
    namespace: str
    children: tuple[WorkloadNode, ...] = ()  # by name, then uid


@dataclasses.dataclass(frozen=True, slots=True)
class _Row:
    uid: str
    parent_uid: str
    kind: str
    name: str
    namespace: str


def _tree_query(cluster: str, uid: str) -> peewee.SelectBase:
    table = models.GpuWorkload
    columns = ("uid", "parent_uid", "kind", "name", "namespace")
    root = (
        table.select(*[getattr(table, c) for c in columns], peewee.Value(0).alias("depth"))
        .where((table.cluster == cluster) & (table.uid == uid))
        .cte("workload_tree", recursive=True, columns=(*columns, "depth"))
    )
    child = table.alias("child")
    below = (
        child.select(*[getattr(child, c) for c in columns], (root.c.depth + 1).alias("depth"))
        .join(root, on=(child.parent_uid == root.c.uid))
        .where((child.cluster == cluster) & (root.c.depth < MAX_DEPTH))
    )
    tree = root.union_all(below)
    return tree.select_from(*[getattr(tree.c, c) for c in columns]).order_by(tree.c.depth)


def _build(row: _Row, children: dict[str, list[_Row]], seen: set[str], depth: int) -> WorkloadNode:
    below: list[WorkloadNode] = []
    if depth < MAX_DEPTH:
        for child in sorted(children.get(row.uid, []), key=lambda r: (r.name, r.uid)):
            if child.uid not in seen:
                seen.add(child.uid)
                below.append(_build(child, children, seen, depth + 1))
    return WorkloadNode(
        uid=row.uid, kind=row.kind, name=row.name, namespace=row.namespace, children=tuple(below)
    )


def workload_tree(db: peewee.Database, *, cluster: str, uid: str) -> WorkloadNode | None:
    """The workload `uid` with its descendants, or None when the cluster has no such uid."""
    with reading(db):
        rows = [
            _Row(*(str(v) for v in values))
            for values in database.tuple_rows(_tree_query(cluster, uid).tuples())
        ]
    if not rows:
        return None
    children: dict[str, list[_Row]] = defaultdict(list)
    unique = {row.uid: row for row in rows}  # a cycle brings a row back: once is enough
    for row in unique.values():
        if row.uid != uid:
            children[row.parent_uid].append(row)
    return _build(unique[uid], children, {uid}, 0)
