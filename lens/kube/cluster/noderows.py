"""The `nodes` table kept current from node facts, allocation and the agents' reports: a row is
written only when something in it changed (the original re-saved every node every 10 s,
REFERENCE.md 5.3), and a GPU node that left the cluster keeps its row with status Deleted."""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Callable, Mapping, Sequence

import peewee

from lens.kube.cluster.nodefacts import NodeFacts
from lens.store import database, models, upserting

DELETED = "Deleted"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeRow:
    """A `nodes` row as the node info job writes it (its column names)."""

    name: str
    address: str
    gpu_name: str
    gpu_count: int
    gpu_allocation: int
    gpu_utilization: float | None  # percent, the mean of the node's GPUs in one minute
    status: str
    k8s_status: str
    cpu: str
    cpu_count: int
    memory: str
    memory_bytes: int | None
    k8s_version: str
    kubelet_version: str
    containerd_version: str
    os: str
    kernel_version: str
    taints: str  # JSON list of {key, value, effect}
    driver_version: str


def node_row(
    facts: NodeFacts,
    *,
    allocated: int,
    utilization_percent: float | None,
    driver_version: str,
    gpu_model: str = "",
) -> NodeRow:
    """The node's row; `gpu_model`: its GPUs' own name from the agent's inventory ('' not
    reported: the GPU model label's value is kept)."""
    return NodeRow(
        name=facts.name,
        address=facts.address,
        gpu_name=gpu_model or facts.gpu_model,
        gpu_count=facts.gpu_capacity,
        gpu_allocation=allocated,
        gpu_utilization=utilization_percent,
        status=facts.status,
        k8s_status=facts.status,
        cpu=facts.cpu_model,
        cpu_count=facts.cpu_count,
        memory=facts.memory,
        memory_bytes=facts.memory_bytes,
        k8s_version=facts.kubelet_version,
        kubelet_version=facts.kubelet_version,
        containerd_version=facts.container_runtime,
        os=facts.os,
        kernel_version=facts.kernel_version,
        taints=json.dumps([dataclasses.asdict(t) for t in facts.taints], separators=(",", ":")),
        driver_version=driver_version,
    )


_COLUMNS = tuple(f.name for f in dataclasses.fields(NodeRow))


class NodeRows:
    """Writes one cluster's node rows (a few hundred bytes each; all read once per run)."""

    def __init__(
        self, db: peewee.Database, *, cluster: str, wall_time: Callable[[], datetime.datetime]
    ) -> None:
        self._db = db
        self._cluster = cluster
        self._now = wall_time

    def write(self, rows: Sequence[NodeRow]) -> int:
        """Store `rows` (every GPU node now); returns how many rows were written."""
        with database.session(self._db):
            # It reads the stored rows before writing: the write lock first (database.py).
            return database.idempotent_transaction(
                self._db, lambda: self._write(rows), lock_first=True
            )

    def _write(self, rows: Sequence[NodeRow]) -> int:
        stored = self._stored()
        now = self._now()
        changed = []
        for row in rows:
            values = dataclasses.asdict(row)
            before = stored.get(row.name)
            if not row.driver_version and before is not None:
                values["driver_version"] = before["driver_version"]  # an agent silent for now
            if before is None or any(before[c] != values[c] for c in _COLUMNS):
                changed.append({**values, "cluster": self._cluster, "updated_at": now})
        present = {row.name for row in rows}
        table = models.Node
        gone = [n for n, b in stored.items() if n not in present and b["status"] != DELETED]
        if gone:
            table.update(
                status=DELETED, k8s_status=DELETED, gpu_allocation=0, updated_at=now
            ).where((table.cluster == self._cluster) & table.name.in_(gone)).execute()
        return upserting.upsert(table, changed) + len(gone)

    def _stored(self) -> Mapping[str, dict[str, object]]:
        table = models.Node
        columns = [getattr(table, c) for c in _COLUMNS]
        query = table.select(*columns).where(table.cluster == self._cluster).tuples()
        return {
            str(values[0]): dict(zip(_COLUMNS, values, strict=True))
            for values in database.tuple_rows(query)
        }
