"""What the agents' reports say of each node: mean GPU utilization of a minute, driver version."""

from __future__ import annotations

import datetime

import peewee

from lens.reports.storing import partitions
from lens.store import database, models
from lens.usage import nodes

MINUTE = datetime.datetime(2026, 11, 24, 10, 0, tzinfo=datetime.UTC)


def _minute(node: str, uuid: str, utilization: float | None, minute: datetime.datetime) -> None:
    models.GpuMinuteReport.create(
        cluster="c1",
        node_name=node,
        gpu_uuid=uuid,
        gpu_index=0,
        minute=minute,
        samples=60,
        expected_samples=60,
        utilization_mean_ratio=utilization,
        idle_seconds=0.0,
        holders=0,
    )


def test_a_nodes_utilization_is_the_mean_of_its_known_gpus_in_that_minute(
    db: peewee.Database,
) -> None:
    with database.session(db):
        partitions.ensure_days(db, [MINUTE.date()])
        _minute("a", "g0", 0.5, MINUTE)
        _minute("a", "g1", 0.25, MINUTE)
        _minute("a", "g2", None, MINUTE)  # unknown is left out, not counted as 0
        _minute("a", "g0", 1.0, MINUTE + datetime.timedelta(minutes=1))
        _minute("b", "g0", 0.1, MINUTE - datetime.timedelta(minutes=1))
        assert nodes.utilization_percent("c1", MINUTE) == {"a": 37.5}
        assert nodes.utilization_percent("other", MINUTE) == {}


def test_a_nodes_driver_version_comes_from_its_present_gpus(db: peewee.Database) -> None:
    with database.session(db):
        for node, uuid, version, gone in (
            ("a", "g0", "6.8.5", False),
            ("a", "g1", "6.8.5", False),
            ("b", "g0", None, False),
            ("c", "g0", "6.7.0", True),
        ):
            models.GpuDevice.create(
                cluster="c1",
                node_name=node,
                uuid=uuid,
                gpu_id=0,
                driver_version=version,
                deleted_at=MINUTE if gone else None,
            )
        assert nodes.driver_versions("c1") == {"a": "6.8.5"}
