from __future__ import annotations

from lens.reports import wire
from lens.store.models import base, reports

from .conftest import check_tables


def test_tables_and_their_natural_keys() -> None:
    check_tables(
        [
            (
                reports.GpuMinuteReport,
                "gpu_minutes",
                ("cluster", "node_name", "minute", "gpu_uuid"),
                False,
            ),
            (
                reports.GpuMinuteHolder,
                "gpu_minute_holders",
                ("cluster", "node_name", "minute", "gpu_uuid", "container_id"),
                False,
            ),
            (
                reports.RdmaPortMinute,
                "rdma_port_minutes",
                ("cluster", "node_name", "minute", "device", "port"),
                False,
            ),
            (reports.GpuHour, "gpu_hours", ("cluster", "node_name", "hour", "gpu_uuid"), False),
            (
                reports.GpuHourHolder,
                "gpu_hour_holders",
                ("cluster", "node_name", "hour", "gpu_uuid", "container_id"),
                False,
            ),
            (reports.GpuHourPending, "gpu_hours_pending", ("cluster", "node_name", "hour"), False),
            (
                reports.GpuMinutePod,
                "gpu_minute_pods",
                ("cluster", "node_name", "minute", "pod_uid"),
                False,
            ),
            (reports.RollupStart, "rollup_starts", ("cluster", "rollup"), False),
        ]
    )


MODELS = (
    reports.GpuMinuteReport,
    reports.GpuMinuteHolder,
    reports.RdmaPortMinute,
    reports.GpuHour,
    reports.GpuHourHolder,
    reports.GpuHourPending,
    reports.GpuMinutePod,
)


def test_report_tables_have_no_surrogate_id() -> None:
    for model in MODELS:
        assert "id" not in model._meta.fields, model.__name__
        assert model._meta.primary_key is False, model.__name__


def test_the_minute_tables_are_partitioned_by_their_minute() -> None:
    partitioned = (
        reports.GpuMinuteReport,
        reports.GpuMinuteHolder,
        reports.RdmaPortMinute,
        reports.GpuMinutePod,
    )
    assert partitioned == reports.DAY_PARTITIONED
    for model in reports.DAY_PARTITIONED:
        # PostgreSQL: every unique index of a partitioned table holds its partition key.
        assert "minute" in (f.name for f in base.natural_key(model)), model.__name__


def test_hot_queries_are_indexed() -> None:
    def covered(model: type[base.LensModel], columns: tuple[str, ...]) -> bool:
        return any(tuple(index[: len(columns)]) == columns for index, _ in model._meta.indexes)

    hot = [
        # per node (and its GPUs, ports) over a time range
        (reports.GpuMinuteReport, ("cluster", "node_name", "minute")),
        (reports.RdmaPortMinute, ("cluster", "node_name", "minute")),
        (reports.GpuHour, ("cluster", "node_name", "hour")),
        (reports.GpuMinuteHolder, ("cluster", "node_name", "minute")),
        (reports.GpuHourHolder, ("cluster", "node_name", "hour")),
        # the whole cluster over a time range; every cluster's older rows (retention)
        (reports.GpuMinuteReport, ("minute",)),
        (reports.RdmaPortMinute, ("minute",)),
        (reports.GpuHour, ("hour",)),
        # per pod (and through pods, per workload) and per namespace over a time range
        (reports.GpuMinuteHolder, ("pod_uid", "minute")),
        (reports.GpuMinuteHolder, ("namespace", "minute")),
        (reports.GpuMinuteHolder, ("minute",)),
        (reports.GpuHourHolder, ("pod_uid", "hour")),
        (reports.GpuHourHolder, ("namespace", "hour")),
        (reports.GpuHourHolder, ("hour",)),
        # the rollup's oldest marks first
        (reports.GpuHourPending, ("cluster", "hour")),
        # a workload's pods' sums over a time range; the writer's delete; retention
        (reports.GpuMinutePod, ("pod_uid", "minute")),
        (reports.GpuMinutePod, ("cluster", "node_name", "minute")),
        (reports.GpuMinutePod, ("minute",)),
    ]
    for model, columns in hot:
        assert covered(model, columns), (model.__name__, columns)


def test_columns_hold_what_the_wire_lets_through() -> None:
    sizes = {
        "gpu_uuid": wire.UUID_CHARS,
        "pci_bus_id": wire.PCI_CHARS,
        "device": wire.DEVICE_CHARS,
        "namespace": wire.NAMESPACE_CHARS,
        "pod_name": wire.NAME_CHARS,
        "pod_uid": wire.POD_UID_CHARS,
        "container_name": wire.NAME_CHARS,
        "container_id": wire.CONTAINER_ID_CHARS,
        "node_name": base.NAME,
        "cluster": base.CLUSTER,
    }
    for model in MODELS:
        for name, field in model._meta.fields.items():
            if name in sizes:
                assert field.max_length == sizes[name], (model.__name__, name)
