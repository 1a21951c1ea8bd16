from __future__ import annotations

import pytest

from lens.store.models import base, nodes


@pytest.mark.parametrize(
    ("model", "table", "key", "append_only"),
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
    ],
)
def test_tables_and_their_natural_keys(
    model: type[base.LensModel], table: str, key: tuple[str, ...], append_only: bool
) -> None:
    assert model._meta.table_name == table
    assert tuple(f.name for f in base.natural_key(model)) == key
    assert model.APPEND_ONLY is append_only
