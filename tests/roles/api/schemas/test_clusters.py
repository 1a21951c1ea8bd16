"""/v1/clusters/overview keeps the original's flat object (REFERENCE.md 2.1) with the GPU totals
and when each was measured beside it, and every figure Lens may not know nullable."""

from __future__ import annotations

from lens.roles.api.schemas import clusters


def test_the_originals_names_and_the_gpu_totals() -> None:
    originals = {
        "total_space",
        "used_space",
        "usage_percentage",
        "total_inodes",
        "used_inodes",
        "inodes_usage_percentage",
        "read_bandwidth",
        "write_bandwidth",
        "total_tx",
        "total_rx",
        "totalNodes",
        "healthyNodes",
        "faultyNodes",
        "fullyIdleNodes",
        "partiallyIdleNodes",
        "busyNodes",
        "allocationRate",
        "utilization",
    }
    properties = clusters.ClusterOverview.model_json_schema()["properties"]
    assert set(properties) == originals | {"totalGpus", "allocatedGpus", "measured"}
    for name in ("total_space", "allocationRate", "utilization", "read_bandwidth"):
        assert {"type": "null"} in properties[name]["anyOf"], name
