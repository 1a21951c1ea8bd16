from __future__ import annotations

from collections.abc import Callable

import pytest

from lens.containers import wire
from lens.containers.model import Container, ContainerEvent, EventType, Source
from lens.proto._generated.lens.v1 import events_pb2 as pb

StartedRecord = Callable[[int, str], pb.Record]


@pytest.fixture
def started_record() -> StartedRecord:
    """Makes the encoded record `sequence` telling that a device-less container `cid` started."""

    def make(sequence: int, cid: str) -> pb.Record:
        container = Container(
            id=cid, name="main", pod=None, devices=(), created_at=1.0, status="Running"
        )
        event = ContainerEvent(
            type=EventType.STARTED,
            source=Source.CONTAINERD,
            container=container,
            time=float(sequence),
        )
        return wire.Encoder().record(event, sequence=sequence, observed_at=1.0)

    return make
