"""The event server's extension for device reports: minutes and inventories decoded, a minute
repeated in one batch written once (the later report), committed with the batch (the devices
before the minutes' per-pod sums, which take their VRAM), counted after."""

from __future__ import annotations

import datetime

import peewee

from lens.containers.server.extending import Carried
from lens.containers.server.recording import EventRecorder
from lens.reports import inventorywire, wire
from lens.reports.attribution import Attribution, Share
from lens.reports.gpuminutes import GpuMinute
from lens.reports.inventory import DeviceInventory, GpuFacts
from lens.reports.samples import Holder
from lens.reports.storing.devices import DeviceStore
from lens.reports.storing.minutes import MinuteStore
from lens.reports.storing.recording import RecordingMetrics, ReportRecorder
from lens.runtime import wirevalues
from lens.runtime.clock import FakeClock
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import models

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
