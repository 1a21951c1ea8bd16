"""Builders of GPU- and port-minutes with known figures, and a MinuteStore on a fake clock, for
the tests of the report store (minutes, hours, partitions, retention)."""

from __future__ import annotations

import datetime
from collections.abc import Sequence

import peewee
import pytest

from lens.reports.attribution import Attribution, Share
from lens.reports.gpuminutes import GpuMinute
from lens.reports.portminutes import PortMinute
from lens.reports.samples import Holder
from lens.reports.storing import minutes
from lens.runtime.clock import FakeClock

T0 = 1_800_000_000  # 2027-01-15 08:00:00 UTC: the start of an hour
CLUSTER = "c1"


def at(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def holder(pod: str, *, namespace: str = "team-a", container: str = "main") -> Holder:
    """A container named after its pod (its ids derive from the names)."""
    return Holder(
        cluster="",
        namespace=namespace,
        pod_name=pod,
        container=container,
        pod_uid=f"uid-{namespace}-{pod}",
        container_id=f"cid-{namespace}-{pod}-{container}",
    )


def gpu_minute(
    start: int,
    uuid: str = "GPU-0",
    *,
    shares: tuple[tuple[Holder, float, float], ...] = (),
    **figures: object,
) -> GpuMinute:
    """A GPU-minute; `shares` are (holder, seconds, held seconds), the rest of the minute idle."""
    values: dict[str, object] = {
        "index": int(uuid.rsplit("-", 1)[-1]) if uuid[-1].isdigit() else 0,
        "pci_bus_id": "0000:1b:00.0",
        "samples": 60,
        "expected_samples": 60,
        **figures,
    }
    attributed = tuple(Share(holder=h, seconds=s, held_seconds=held) for h, s, held in shares)
    idle = 60.0 - sum(share.seconds for share in attributed)
    return GpuMinute(
        start=start,
        uuid=uuid,
        held_by=Attribution(shares=attributed, idle_seconds=idle),
        **values,  # type: ignore[arg-type]  # checked by the dataclass at run time
    )


def port_minute(start: int, device: str = "mlx5_0", port: int = 1, **figures: object) -> PortMinute:
    values: dict[str, object] = {"samples": 60, "expected_samples": 60, **figures}
    return PortMinute(start=start, device=device, port=port, **values)  # type: ignore[arg-type]


@pytest.fixture
def report_clock() -> FakeClock:
    """Two minutes past T0: minutes from 8 days before to a day after are taken."""
    return FakeClock(start_time=T0 + 120)


@pytest.fixture
def store(db: peewee.Database, report_clock: FakeClock) -> minutes.MinuteStore:
    """A MinuteStore of CLUSTER on `report_clock`, over each engine's database."""
    return minutes.MinuteStore(db, cluster=CLUSTER, clock=report_clock)


def write(
    store: minutes.MinuteStore,
    node: str,
    gpu: Sequence[GpuMinute] = (),
    ports: Sequence[PortMinute] = (),
) -> int:
    """Prepare, make the partitions and write, as `lens jobs` does."""
    prepared = store.prepare(node, gpu, ports)
    store.before_write(prepared)
    return store.write_prepared(prepared)
