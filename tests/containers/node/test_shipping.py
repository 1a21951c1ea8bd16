"""The agent's shipper against the real event server: delivery, acks, restarts, tokens, TLS."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lens.containers.model import Container, ContainerEvent, Device, EventType, Inventory, Source
from lens.containers.node.outbox import Outbox
from lens.containers.node.shipping import EventShipper, ShipperMetrics, channel_credentials
from lens.runtime import errors
from lens.runtime.backoff import Backoff
from lens.runtime.config import EventsConfig
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import models

pytestmark = pytest.mark.slow_timeout
SQLITE = pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)


def _put(box: Outbox, count: int) -> None:
    for n in range(count):
        box.put(Inventory(source=Source.CONTAINERD, time=float(n), container_ids=()))


def _shipper(box: Outbox, address: str, token_file: str = "") -> EventShipper:
    cfg = EventsConfig(server_address=address, token_file=token_file, batch_records=7)
    return EventShipper(
        cfg,
        outbox=box,
        node="n1",
        metrics=ShipperMetrics(SelfMetrics(process=False)),
        backoff=Backoff(initial=0.05, maximum=0.2),
    )


def _committed(boot_id: str) -> int:
    row = models.EventStream.select().where(models.EventStream.boot_id == boot_id).first()
    return 0 if row is None else int(row.committed_sequence)


@SQLITE
def test_the_outbox_empties_into_the_server_and_survives_its_restart(
    start_jobs: Callable[..., object], free_port: Callable[[], int], eventually: Callable[..., None]
) -> None:
    port = free_port()
    server = start_jobs(port=port)
    box = Outbox(boot_id="boot-1", capacity=1000, wall_time=lambda: 0.0)
    shipper = _shipper(box, f"127.0.0.1:{port}")
    shipper.start()
    try:
        _put(box, 20)
        eventually(lambda: len(box) == 0, timeout=10)
        assert _committed("boot-1") == 20
        server.stop()  # type: ignore[attr-defined]
        _put(box, 10)
        server = start_jobs(port=port)
        eventually(lambda: len(box) == 0, timeout=15)
        assert _committed("boot-1") == 30
        assert shipper.streams >= 2
    finally:
        shipper.stop()


@SQLITE
def test_without_the_right_token_nothing_is_acknowledged(
    start_jobs: Callable[..., object], tmp_path: Path, eventually: Callable[..., None]
) -> None:
    server = start_jobs(token="right")
    token = tmp_path / "agent-token"
    token.write_text("wrong\n")
    box = Outbox(boot_id="boot-2", capacity=100, wall_time=lambda: 0.0)
    shipper = _shipper(box, server.address, str(token))  # type: ignore[attr-defined]
    shipper.start()
    try:
        _put(box, 3)
        eventually(lambda: shipper.streams == 0 and len(box) == 3, timeout=2)
        token.write_text("right\n")  # read again on the next connection
        eventually(lambda: len(box) == 0, timeout=10)
    finally:
        shipper.stop()


def test_tls_needs_a_readable_ca_file() -> None:
    assert channel_credentials(EventsConfig()) is None
    assert channel_credentials(EventsConfig(tls=True)) is not None
    with pytest.raises(errors.ConfigError, match=r"events\.ca_file"):
        channel_credentials(EventsConfig(tls=True, ca_file="/nonexistent/ca.pem"))


@SQLITE
def test_batches_stay_below_what_a_grpc_server_accepts(
    start_jobs: Callable[..., object], eventually: Callable[..., None]
) -> None:
    """batch_records far above what fits in one gRPC message (4 MiB at the server) does not wedge
    the stream: batches are cut at MAX_BATCH_BYTES."""
    server = start_jobs()
    devices = tuple(
        Device(type="gpu", name="AMD Instinct MI300X", number=i, uuid=f"0x{i:016x}")
        for i in range(8)
    ) + tuple(Device(type="ib", name=f"mlx5_{i}", number=i, uuid=f"mlx5_{i}") for i in range(8))
    box = Outbox(boot_id="boot-3", capacity=10_000, wall_time=lambda: 0.0)
    for n in range(8000):  # about 6 MB of whole-node events
        container = Container(
            id=f"{n:064d}", name="w", pod=None, devices=devices, created_at=1.0, status="Created"
        )
        box.put(
            ContainerEvent(
                type=EventType.CREATED, source=Source.CONTAINERD, container=container, time=1.0
            )
        )
    cfg = EventsConfig(server_address=server.address, batch_records=10_000)  # type: ignore[attr-defined]
    shipper = EventShipper(
        cfg, outbox=box, node="n1", metrics=ShipperMetrics(SelfMetrics(process=False))
    )
    shipper.start()
    try:
        eventually(lambda: len(box) == 0, timeout=30)
    finally:
        shipper.stop()
    assert _committed("boot-3") == 8000
    assert models.NodeContainerDevice.select().count() == 8000 * 16
