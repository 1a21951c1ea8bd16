from __future__ import annotations

from lens.store.models import nodes

from .conftest import check_tables


def test_tables_and_their_natural_keys() -> None:
    check_tables(
        [
            (nodes.GpuDevice, "gpu_devices", ("cluster", "node_name", "gpu_id"), False),
            (nodes.Node, "nodes", ("cluster", "name"), False),
            (
                nodes.NodeDeviceChangelog,
                "node_device_changelog",
                ("cluster", "node_name", "device_type", "device_uuid", "op", "created_at"),
                True,
            ),
            (nodes.RdmaDevice, "rdma_devices", ("cluster", "node_name", "ifname"), False),
        ]
    )
