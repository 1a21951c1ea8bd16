"""The usage payloads: what /openapi.json says of them, and null where a figure is unknown."""

from __future__ import annotations

import datetime

from lens.roles.api.schemas import usage
from lens.roles.api.schemas.measured import Measured


def test_unknown_figures_are_null_and_required() -> None:
    schema = usage.Gpu.model_json_schema()
    live = ("as_of", "utilization_percent", "memory_used_bytes", "power_watts", "holder")
    for name in live:
        assert name in schema["required"], name
        assert {"type": "null"} in schema["properties"][name]["anyOf"], name
    gpu = usage.Gpu(
        node="n1",
        gpu_id=0,
        uuid="GPU-0",
        model="MI300X",
        memory_total_bytes=None,
        as_of=None,
        utilization_percent=None,
        memory_used_bytes=None,
        power_watts=None,
        temperature_celsius=None,
        holder=None,
        holder_pods=0,
    )
    assert gpu.model_dump()["utilization_percent"] is None


def test_days_are_iso_dates() -> None:
    listed = usage.GpuHoursList(
        data=[],
        total=0,
        start=datetime.date(2026, 11, 1),
        end=datetime.date(2026, 11, 30),
        measured=Measured(as_of=None, stale=True),
    )
    assert listed.model_dump(mode="json") == {
        "data": [],
        "total": 0,
        "start": "2026-11-01",
        "end": "2026-11-30",
        "measured": {"as_of": None, "stale": True},
    }
    assert usage.GpuHoursList.model_json_schema()["properties"]["start"]["format"] == "date"
