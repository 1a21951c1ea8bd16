"""The agent's one event stream: container events and device reports share its numbering, and
nothing is shipped where no server is configured."""

from __future__ import annotations

import asyncio
import threading

from lens.containers.model import Inventory, Source
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.roles.node_agent.streaming import EventStream
from lens.runtime.config import EventsConfig
from lens.runtime.selfmetrics import SelfMetrics


def test_container_events_and_reports_share_one_numbered_outbox() -> None:
    metrics = SelfMetrics(process=False)
    stream = EventStream(EventsConfig(), node="n1", metrics=metrics, wall_time=lambda: 5.0)
    assert stream.shipper is None
    watched: list[object] = []
    stream.watch(watched.append)
    inventory = Inventory(source=Source.CONTAINERD, time=1.0, container_ids=())
    stream.put(inventory)
    assert watched == [inventory]
    report = pb.Record()
    report.devices.SetInParent()
    stream.put_message(report)
    _, batch = stream.outbox.take(0, 10, timeout=0)
    assert [e.sequence for e in batch] == [1, 2]
    assert metrics.registry.get_sample_value("lens_events_buffered") == 2
    asyncio.run(stream.start())
    asyncio.run(stream.stop())


def test_a_configured_server_gets_a_shipper_that_starts_and_stops_with_the_part() -> None:
    events = EventsConfig(server_address="127.0.0.1:9")  # nobody listens: it keeps retrying
    stream = EventStream(events, node="n1", metrics=SelfMetrics(process=False))
    assert stream.shipper is not None
    asyncio.run(stream.start())
    assert "event-shipper" in _threads()
    asyncio.run(stream.stop())
    assert "event-shipper" not in _threads()


def _threads() -> list[str]:
    return [thread.name for thread in threading.enumerate()]
