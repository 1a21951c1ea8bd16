"""/v1/nodes payloads keep the original's field names (REFERENCE.md 2.1), so its clients and
Grafana panels read Lens unchanged."""

from __future__ import annotations

from lens.roles.api.schemas import nodes


def _fields(model: type) -> set[str]:
    return set(model.model_json_schema()["properties"])  # type: ignore[attr-defined]


def test_the_originals_names() -> None:
    assert _fields(nodes.GpuNode) == {
        "name",
        "ip",
        "gpu_name",
        "gpu_count",
        "gpu_allocation",
        "gpu_utilization",
        "status",
        "status_color",
    }
    assert _fields(nodes.GpuNodeDetail) == {
        "name",
        "health",
        "cpu",
        "memory",
        "os",
        "gpu_driver_version",
        "static_gpu_details",
        "kubelet_version",
        "containerd_version",
        # Lens's own beside them: the same facts as numbers, and when they were read.
        "cpu_count",
        "cpu_model",
        "memory_bytes",
        "gpu_count",
        "gpu_model",
        "measured",
    }
    # The original's six fields, and the GPU's uuid and health beside them.
    assert _fields(nodes.GpuDeviceInfo) == {
        "deviceId",
        "model",
        "memory",
        "utilization",
        "temperature",
        "power",
        "uuid",
        "health",
    }
    assert _fields(nodes.NodeList) == {"data", "total", "measured"}


def test_unknown_figures_are_nullable() -> None:
    properties = nodes.GpuDeviceInfo.model_json_schema()["properties"]
    for name in ("memory", "utilization", "temperature", "power", "health"):
        assert {"type": "null"} in properties[name]["anyOf"], name
