"""0006: gpu_hour_holders.measured_seconds and used_seconds — each holder's GPU-seconds in the
minutes whose utilization is known, and those weighted by it (used GPU-hours per pod). Rows
rolled up before carry 0 and 0: nothing measured; the next rollup of their hour fills them."""

from __future__ import annotations

from typing import Any

import peewee


def up(migrator: Any, db: peewee.Database) -> None:
    migrator.migrate(
        migrator.add_column(
            "gpu_hour_holders", "measured_seconds", peewee.DoubleField(default=0.0)
        ),
        migrator.add_column("gpu_hour_holders", "used_seconds", peewee.DoubleField(default=0.0)),
    )
