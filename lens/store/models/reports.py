"""Node device reports (docs/reports.md): gpu_minutes, gpu_minute_holders, rdma_port_minutes, their
hourly rollup gpu_hours and gpu_hour_holders, gpu_hours_pending (hours to roll up again), and
gpu_minute_pods (each pod's sums per node and minute, for workload series) with rollup_starts.

lens/reports/storing/ writes them (minutes.py, hours.py) and trims them (retention.py). These
tables have no surrogate id: they hold a row per device and minute (a billion rows at 100,000
GPUs), and their natural key is the only identity anything uses. On PostgreSQL the three minute
tables, and gpu_minute_pods, are partitioned by day on `minute` (migrations 0003 and 0011;
storing/partitions.py).
"""

from __future__ import annotations

import peewee

from lens.store.fields import JsonField, UtcDateTimeField
from lens.store.models.base import NAME, NAMESPACE, UID, LensModel, text

# The same sizes as lens/reports/wire.py's, which cuts or refuses what does not fit.
GPU_UUID = 128
PCI_BUS_ID = 64
RDMA_DEVICE = 64
CONTAINER_ID = 128


def _ratio() -> peewee.DoubleField:
    return peewee.DoubleField(null=True)


class GpuMinuteReport(LensModel):
    """One GPU over one UTC minute, as the node agent summarised it; NULL: unknown, never 0.

    The temperatures are the minute's greatest reading of each sensor: one column per sensor the
    devices report (amdgpu's edge, junction and memory; NVIDIA's gpu) and their maximum, which
    also covers a sensor not named here."""

    node_name = peewee.CharField(max_length=NAME)
    gpu_uuid = peewee.CharField(max_length=GPU_UUID)
    gpu_index = peewee.IntegerField()
    pci_bus_id = text(PCI_BUS_ID)
    minute = UtcDateTimeField()  # the minute's start
    samples = peewee.IntegerField()
    expected_samples = peewee.IntegerField()
    utilization_mean_ratio = _ratio()
    utilization_max_ratio = _ratio()
    memory_activity_mean_ratio = _ratio()
    vram_used_mean_bytes = peewee.DoubleField(null=True)
    vram_used_max_bytes = peewee.BigIntegerField(null=True)
    power_mean_watts = peewee.DoubleField(null=True)
    energy_joules = peewee.DoubleField(null=True)
    temperature_max_celsius = peewee.DoubleField(null=True)
    temperature_edge_celsius = peewee.DoubleField(null=True)
    temperature_junction_celsius = peewee.DoubleField(null=True)
    temperature_memory_celsius = peewee.DoubleField(null=True)
    temperature_gpu_celsius = peewee.DoubleField(null=True)
    idle_seconds = peewee.DoubleField()  # held by no container
    holders = peewee.IntegerField()  # its gpu_minute_holders rows

    class Meta:
        table_name = "gpu_minutes"
        primary_key = False
        indexes = (
            (("cluster", "node_name", "minute", "gpu_uuid"), True),
            (("minute",), False),
        )


class GpuMinuteHolder(LensModel):
    """A container's share of one GPU-minute (attribution.py's Share)."""

    node_name = peewee.CharField(max_length=NAME)
    gpu_uuid = peewee.CharField(max_length=GPU_UUID)
    minute = UtcDateTimeField()
    container_id = peewee.CharField(max_length=CONTAINER_ID)
    namespace = text(NAMESPACE)
    pod_name = text(NAME)
    pod_uid = text(UID)
    container_name = text(NAME)
    seconds = peewee.DoubleField()  # its share: seconds held alone, shared ones split equally
    held_seconds = peewee.DoubleField()  # how long it held the GPU, alone or not

    class Meta:
        table_name = "gpu_minute_holders"
        primary_key = False
        indexes = (
            (("cluster", "node_name", "minute", "gpu_uuid", "container_id"), True),
            (("pod_uid", "minute"), False),
            (("namespace", "minute"), False),
            (("minute",), False),
        )


class GpuMinutePod(LensModel):
    """One pod's GPUs on one node over one UTC minute: its gpu_minute_holders rows joined to
    the GPU-minutes they held and those GPUs' gpu_devices rows, summed (storing/podminutes.py).

    Each figure is a sum of the figure times the seconds held and the seconds held where the
    figure was known, so minutes add up into any bucket exactly: a workload's series reads
    a row per pod and minute instead of a row per GPU-minute held, joined twice."""

    node_name = peewee.CharField(max_length=NAME)
    minute = UtcDateTimeField()
    pod_uid = text(UID)
    held_seconds = peewee.DoubleField()
    utilization_seconds = peewee.DoubleField()  # held seconds x utilization (a ratio)
    utilization_known_seconds = peewee.DoubleField()
    vram_ratio_seconds = peewee.DoubleField()  # held seconds x VRAM used / the GPU's VRAM
    vram_known_seconds = peewee.DoubleField()  # held seconds where VRAM used was known
    # The one VRAM size (gpu_devices.vram_bytes, when written) of the GPUs whose VRAM use is
    # known; NULL: none known, one without a size, or sizes that differ. A reader may use
    # vram_ratio_seconds only while the node's GPUs still have that size.
    vram_bytes = peewee.BigIntegerField(null=True)
    power_joules = peewee.DoubleField()  # held seconds x mean power
    power_known_seconds = peewee.DoubleField()

    class Meta:
        table_name = "gpu_minute_pods"
        primary_key = False
        indexes = (
            (("cluster", "node_name", "minute", "pod_uid"), True),
            (("pod_uid", "minute"), False),
            (("minute",), False),
        )


class RollupStart(LensModel):
    """From which minute on a rollup table (`rollup`) holds every minute: the minutes before
    `since` were written before the table existed and are read from what it sums.
    `cluster` '' stands for every cluster (migration 0011 records the latest minute stored)."""

    rollup = peewee.CharField(max_length=64)
    since = UtcDateTimeField()

    class Meta:
        table_name = "rollup_starts"
        indexes = ((("cluster", "rollup"), True),)


class RdmaPortMinute(LensModel):
    """One RDMA port over one UTC minute: counter increases, NULL where unknown.

    `counters` and `hw_counters` map each error or discard counter whose increase was not 0 to
    it (null: unknown); `errors` sums the known increases of both (NULL: none known)."""

    node_name = peewee.CharField(max_length=NAME)
    device = peewee.CharField(max_length=RDMA_DEVICE)
    port = peewee.IntegerField()
    minute = UtcDateTimeField()
    samples = peewee.IntegerField()
    expected_samples = peewee.IntegerField()
    transmit_bytes = peewee.BigIntegerField(null=True)
    receive_bytes = peewee.BigIntegerField(null=True)
    transmit_packets = peewee.BigIntegerField(null=True)
    receive_packets = peewee.BigIntegerField(null=True)
    errors = peewee.BigIntegerField(null=True)
    counters = JsonField(null=True)
    hw_counters = JsonField(null=True)
    counter_resets = peewee.IntegerField()

    class Meta:
        table_name = "rdma_port_minutes"
        primary_key = False
        indexes = (
            (("cluster", "node_name", "minute", "device", "port"), True),
            (("minute",), False),
        )


class GpuHour(LensModel):
    """One GPU over one UTC hour, rolled up from its gpu_minutes rows (storing/hours.py).

    Means are over the hour's minutes weighted by their samples (so, over readings); maxima
    and energy over its minutes; NULL where no minute knew the figure."""

    node_name = peewee.CharField(max_length=NAME)
    gpu_uuid = peewee.CharField(max_length=GPU_UUID)
    gpu_index = peewee.IntegerField()
    hour = UtcDateTimeField()  # the hour's start
    minutes = peewee.IntegerField()  # gpu_minutes rows in the hour (60: all reported)
    samples = peewee.IntegerField()
    expected_samples = peewee.IntegerField()
    utilization_mean_ratio = _ratio()
    utilization_max_ratio = _ratio()
    memory_activity_mean_ratio = _ratio()
    vram_used_mean_bytes = peewee.DoubleField(null=True)
    vram_used_max_bytes = peewee.BigIntegerField(null=True)
    power_mean_watts = peewee.DoubleField(null=True)
    energy_joules = peewee.DoubleField(null=True)  # the sum over the minutes that knew it
    energy_minutes = peewee.IntegerField()  # minutes whose energy is known
    temperature_max_celsius = peewee.DoubleField(null=True)
    temperature_edge_celsius = peewee.DoubleField(null=True)
    temperature_junction_celsius = peewee.DoubleField(null=True)
    temperature_memory_celsius = peewee.DoubleField(null=True)
    temperature_gpu_celsius = peewee.DoubleField(null=True)
    idle_seconds = peewee.DoubleField()

    class Meta:
        table_name = "gpu_hours"
        primary_key = False
        indexes = (
            (("cluster", "node_name", "hour", "gpu_uuid"), True),
            (("hour",), False),
        )


class GpuHourHolder(LensModel):
    """A container's share of one GPU-hour: the sums of its gpu_minute_holders rows."""

    node_name = peewee.CharField(max_length=NAME)
    gpu_uuid = peewee.CharField(max_length=GPU_UUID)
    hour = UtcDateTimeField()
    container_id = peewee.CharField(max_length=CONTAINER_ID)
    namespace = text(NAMESPACE)
    pod_name = text(NAME)
    pod_uid = text(UID)
    container_name = text(NAME)
    minutes = peewee.IntegerField()  # minutes in which it held the GPU
    seconds = peewee.DoubleField()
    held_seconds = peewee.DoubleField()
    # Its seconds in the minutes whose utilization is known, and those seconds each times its
    # minute's utilization: used GPU-seconds, exact however partly it held the GPU.
    measured_seconds = peewee.DoubleField(default=0.0)
    used_seconds = peewee.DoubleField(default=0.0)

    class Meta:
        table_name = "gpu_hour_holders"
        primary_key = False
        indexes = (
            (("cluster", "node_name", "hour", "gpu_uuid", "container_id"), True),
            (("pod_uid", "hour"), False),
            (("namespace", "hour"), False),
            (("hour",), False),
        )


class GpuHourPending(LensModel):
    """A node's hour whose gpu_minutes changed since it was last rolled up.

    The minute writer sets a fresh `token` each time; the rollup clears a mark only if its token
    is still the one it read, so a minute written while it worked is rolled up by its next run."""

    node_name = peewee.CharField(max_length=NAME)
    hour = UtcDateTimeField()
    token = peewee.BigIntegerField()
    marked_at = UtcDateTimeField()

    class Meta:
        table_name = "gpu_hours_pending"
        primary_key = False
        indexes = (
            (("cluster", "node_name", "hour"), True),
            (("cluster", "hour"), False),
        )


# Partitioned by day on `minute` on PostgreSQL (storing/partitions.py).
DAY_PARTITIONED: tuple[type[LensModel], ...] = (
    GpuMinuteReport,
    GpuMinuteHolder,
    RdmaPortMinute,
    GpuMinutePod,
)
