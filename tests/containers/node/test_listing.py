from __future__ import annotations

from lens.containers.model import Container, Device, Pod
from lens.containers.node import listing


def test_containers_use_the_originals_field_names() -> None:
    container = Container(
        id="c1",
        name="main",
        pod=Pod(uid="u", name="p", namespace="ns"),
        devices=(
            Device(type="gpu", name="MI300X", number=1, uuid="g1", path="/dev/dri/renderD129"),
            Device(type="ib", name="mlx5_0", number=0, uuid="n0", path="/dev/infiniband/uverbs0"),
        ),
        created_at=5.0,
        status="OOMKilled",
    )
    (row,) = listing.containers_json([container])
    assert (row["pod_name"], row["pod_namespace"], row["pod_uuid"]) == ("p", "ns", "u")
    assert row["oom_killed"] is True
    assert row["devices"] == {
        "gpu": [
            {"name": "MI300X", "id": 1, "path": "/dev/dri/renderD129", "kind": "GPU", "uuid": "g1"}
        ],
        "infiniband": [
            {
                "name": "mlx5_0",
                "id": 0,
                "path": "/dev/infiniband/uverbs0",
                "kind": "rdma",
                "uuid": "n0",
            }
        ],
    }
