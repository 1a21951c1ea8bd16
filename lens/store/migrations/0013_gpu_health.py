"""0013: gpu_devices.health — the node agent's judgement of each GPU ("healthy", or its state
and active reasons, "degraded: throttle_thermal"), kept with its facts so that each change is a
row of node_device_changelog. NULL: not judged (an agent from before it, or health off)."""

from __future__ import annotations

from typing import Any

import peewee


def up(migrator: Any, db: peewee.Database) -> None:
    migrator.migrate(
        migrator.add_column("gpu_devices", "health", peewee.CharField(max_length=128, null=True)),
    )
