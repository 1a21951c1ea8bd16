"""The event server's extension for device reports: minutes and inventories decoded, a minute
repeated in one batch written once (the later report), committed with the batch (the devices
before the minutes' per-pod sums, which take their VRAM), counted after."""

from __future__ import annotations

import datetime

import peewee
import pytest

from lens.containers.server.extending import Carried
from lens.containers.server.recording import EventRecorder
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.reports import corrections, inventorywire, wire
from lens.reports.attribution import Attribution, Share
from lens.reports.gpuminutes import GpuMinute
from lens.reports.inventory import DeviceInventory, GpuFacts
from lens.reports.samples import Holder, Holding
from lens.reports.storing import hours
from lens.reports.storing.devices import DeviceStore
from lens.reports.storing.minutes import MinuteStore
from lens.reports.storing.recording import RecordingMetrics, ReportRecorder
from lens.runtime import wirevalues
from lens.runtime.clock import FakeClock
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import models
from lens.usage import gpuhours

T0 = 1_800_000_000


def _minute(utilization: float) -> GpuMinute:
    holder = Holder(
        cluster="", namespace="ns", pod_name="p", container="c", pod_uid="u", container_id="cid"
    )
    return GpuMinute(
        start=T0,
        uuid="GPU-0",
        index=0,
        pci_bus_id="0000:05:00.0",
        samples=60,
        expected_samples=60,
        utilization_mean_ratio=utilization,
        vram_used_mean_bytes=2.0**30,
        held_by=Attribution(
            shares=(Share(holder=holder, held_seconds=45.0, seconds=45.0),), idle_seconds=15.0
        ),
    )


def test_reports_commit_with_their_batch_the_later_minute_winning(db: peewee.Database) -> None:
    metrics = SelfMetrics(process=False)
    recorder = ReportRecorder(
        minutes=MinuteStore(db, cluster="c1", clock=FakeClock(start_time=T0 + 120)),
        devices=DeviceStore(cluster="c1"),
        metrics=RecordingMetrics(metrics),
    )
    first = wire.gpu_minutes_record([_minute(0.25)])
    later = wire.gpu_minutes_record([_minute(0.75)])
    gpu = GpuFacts(
        uuid="GPU-0",
        index=0,
        vendor="amd",
        model="MI300X",
        serial="S",
        pci_bus_id="",
        vram_bytes=2**32,
    )
    inventory = inventorywire.inventory_record(DeviceInventory(time=T0, gpus=(gpu,)))
    wirevalues.set_time(inventory.observed_at, T0 + 5)
    records = [Carried(recorder, recorder.decode(r)) for r in (first, later, inventory)]
    events = EventRecorder(db, cluster="c1")
    events.commit(node="n1", boot_id="b", records=records, through=3)
    assert events.committed("n1", "b") == 3
    (row,) = models.GpuMinuteReport.select()
    assert row.utilization_mean_ratio == 0.75
    (held,) = models.GpuMinuteHolder.select()
    assert (held.pod_uid, held.seconds) == ("u", 45.0)
    # The node's first batch brings its inventory: the pod's sums took its GPU's VRAM.
    (pod,) = models.GpuMinutePod.select()
    assert (pod.pod_uid, pod.vram_bytes, pod.vram_ratio_seconds) == ("u", 2**32, 0.25 * 45.0)
    (device,) = models.GpuDevice.select()
    assert (device.uuid, device.serial, device.deleted_at) == ("GPU-0", "S", None)
    (change,) = models.NodeDeviceChangelog.select()
    assert change.op == "CREATE"
    assert change.created_at == datetime.datetime.fromtimestamp(T0 + 5, datetime.UTC)
    sample = metrics.registry.get_sample_value
    assert sample("lens_reports_minutes_received_total", {"device": "gpu"}) == 1
    assert sample("lens_device_changes_total", {"op": "CREATE"}) == 1


def _holding(pod: str, since: float) -> Holding:
    holder = Holder(
        cluster="",
        namespace=f"ns-{pod}",
        pod_name=pod,
        container="c",
        pod_uid=f"u-{pod}",
        container_id=f"cid-{pod}",
    )
    return Holding(gpu_uuid="GPU-0", holder=holder, since=since)


def test_a_correction_stored_twice_is_stored_once_and_the_hour_and_day_follow(
    db: peewee.Database,
) -> None:
    metrics = SelfMetrics(process=False)
    recorder = ReportRecorder(
        minutes=MinuteStore(db, cluster="c1", clock=FakeClock(start_time=T0 + 120)),
        devices=DeviceStore(cluster="c1"),
        metrics=RecordingMetrics(metrics),
    )
    events = EventRecorder(db, cluster="c1")

    def commit(boot: str, record: pb.Record) -> None:
        events.commit(
            node="n1", boot_id=boot, records=[Carried(recorder, recorder.decode(record))], through=1
        )

    a, late = _holding("a", T0 + 30), _holding("b", T0)
    sent = corrections.with_holdings(_minute(0.5), [a])
    commit("boot-1", wire.gpu_minutes_record([sent]))
    hours.roll_up(db, cluster="c1", now=_at(T0 + 120))
    (hour,) = models.GpuHour.select()
    assert (hour.idle_seconds, [h.pod_name for h in models.GpuHourHolder.select()]) == (30.0, ["a"])
    # b held the GPU all minute, learnt after the minute was sent: the minute comes again whole,
    # and once more (a journal resent to a server that forgot the stream's position).
    correction = wire.gpu_minutes_record(
        [corrections.with_holdings(sent, [a, late])], correction=True
    )
    commit("boot-1-again", correction)
    commit("boot-1-again-2", correction)
    (row,) = models.GpuMinuteReport.select()
    assert (row.idle_seconds, row.holders, row.utilization_mean_ratio) == (0.0, 2, 0.5)
    held = sorted((h.pod_name, h.held_seconds, h.seconds) for h in models.GpuMinuteHolder.select())
    assert held == [("a", 30.0, 15.0), ("b", 60.0, 45.0)]
    pods = sorted((p.pod_uid, p.held_seconds) for p in models.GpuMinutePod.select())
    assert pods == [("u-a", 30.0), ("u-b", 60.0)]  # a pod's sums weigh the seconds it held
    hours.roll_up(db, cluster="c1", now=_at(T0 + 120))
    (hour,) = models.GpuHour.select()
    assert (hour.minutes, hour.idle_seconds) == (1, 0.0)
    by_pod = sorted((h.pod_name, h.minutes, h.seconds) for h in models.GpuHourHolder.select())
    assert by_pod == [("a", 1, 15.0), ("b", 1, 45.0)]
    day = _at(T0).date()
    groups = gpuhours.day_hours("c1", day, label_key="", gpu_models={})
    held_hours = {(g.kind, g.value): g.held_hours for g in groups}
    assert held_hours[("namespace", "ns-a")] == pytest.approx(15 / 3600)
    assert held_hours[("namespace", "ns-b")] == pytest.approx(45 / 3600)
    sample = metrics.registry.get_sample_value
    assert sample("lens_reports_corrections_received_total") == 2
    assert sample("lens_reports_minutes_received_total", {"device": "gpu"}) == 3


def _at(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)
