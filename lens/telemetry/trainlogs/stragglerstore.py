"""Straggler flags in SQL: each flag stragglers.py hands back written to training_stragglers (a
new one inserted, a known one updated by its start), and the flags stored as open read back for a
tracker to carry on after a restart or a change of leader."""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from lens.store import models, upserting
from lens.telemetry.trainlogs.stragglers import Straggle


def save(cluster: str, straggles: Sequence[Straggle]) -> int:
    """Write `straggles`; the number of rows written."""
    now = datetime.datetime.now(datetime.UTC)
    rows = [
        {
            "cluster": cluster,
            "workload_uid": s.workload_uid,
            "serial": s.run,
            "source": s.source,
            "node_name": s.node,
            "started_at": s.started_at,
            "ended_at": s.ended_at,
            "intervals": s.intervals,
            "mean_share_above_median": s.mean_share_above_median,
            "peak_share_above_median": s.peak_share_above_median,
            "open": s.open,
            "updated_at": now,
        }
        for s in straggles
    ]
    return upserting.upsert(models.TrainingStraggler, rows) if rows else 0


def open_straggles(cluster: str) -> list[Straggle]:
    """The flags of `cluster` stored as open, oldest first."""
    table = models.TrainingStraggler
    rows = (
        table.select()
        .where((table.cluster == cluster) & (table.open == True))  # noqa: E712
        .order_by(table.started_at, table.id)
    )
    return [
        Straggle(
            workload_uid=row.workload_uid,
            run=row.serial,
            source=row.source,
            node=row.node_name,
            started_at=row.started_at,
            ended_at=row.ended_at,
            intervals=row.intervals,
            mean_share_above_median=row.mean_share_above_median,
            peak_share_above_median=row.peak_share_above_median,
            open=True,
        )
        for row in rows
    ]
