"""The series payloads keep the original's names (REFERENCE.md 2.1): MetricsGraph, TimePoint,
the heatmap's capital `Data`, the workload charts' names with spaces; Lens's additions
(`measured`, a cell's `held`) come beside them."""

from __future__ import annotations

from lens.roles.api.schemas import series


def _fields(model: type) -> set[str]:
    return set(model.model_json_schema(mode="serialization")["properties"])  # type: ignore[attr-defined]


def test_the_originals_names() -> None:
    assert _fields(series.MetricsGraph) == {"serial", "series", "config"}
    assert _fields(series.Series) == {"labels", "values"}
    assert _fields(series.TimePoint) == {"timestamp", "value"}
    assert _fields(series.GraphConfig) == {"y_axis_unit"}
    assert _fields(series.NodeGpuMetrics) == {"gpu_utilization", "gpu_allocation_rate"}
    assert _fields(series.NodeAllocation) == {
        "node",
        "vendor",
        "capacity",
        "allocated",
        "allocationRate",
    }
    assert _fields(series.ClusterUtilization) == {"allocationRate", "utilization", "measured"}
    assert _fields(series.UtilizationHistory) == {
        "allocationRate",
        "utilization",
        "vramUtilization",
    }
    assert _fields(series.Heatmap) == {"serial", "unit", "yaxis_max", "yaxis_min", "Data"}
    assert _fields(series.HeatmapCell) == {"node_name", "gpu_id", "value", "held"}
    assert _fields(series.ClusterHeatmap) == {"power", "temperature", "utilization", "measured"}
    assert _fields(series.WorkloadMetrics) == {
        "GPU Utilization",
        "GPU Memory Utilization",
        "GPU Power",
        "TrainingPerformance",
    }


def test_workload_charts_are_named_as_the_original_both_ways() -> None:
    graph = series.MetricsGraph(serial=1, series=[], config=series.GraphConfig(y_axis_unit="%"))
    named = {
        "GPU Utilization": graph,
        "GPU Memory Utilization": graph,
        "GPU Power": graph,
        "TrainingPerformance": graph,
    }
    charts = series.WorkloadMetrics.model_validate(named)
    assert set(charts.model_dump(by_alias=True)) == set(named)
    assert series.WorkloadMetrics.model_validate(charts.model_dump(by_alias=True)) == charts


def test_unknown_figures_are_nullable() -> None:
    for model, name in (
        (series.NodeAllocation, "vendor"),
        (series.ClusterUtilization, "allocationRate"),
        (series.ClusterUtilization, "utilization"),
    ):
        schema = model.model_json_schema()["properties"][name]
        assert {"type": "null"} in schema["anyOf"], name
