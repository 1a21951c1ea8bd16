from __future__ import annotations

import pytest

from lens.store.models import base, containers


@pytest.mark.parametrize(
    ("model", "table", "key", "append_only"),
    [
        (containers.EventStream, "event_streams", ("cluster", "node_name", "boot_id"), False),
        (containers.NodeContainer, "node_containers", ("cluster", "container_id"), False),
        (
            containers.NodeContainerDevice,
            "node_container_devices",
            ("cluster", "container_id", "device_type", "device_uuid"),
            False,
        ),
        (
            containers.NodeContainerEvent,
            "node_container_events",
            ("cluster", "container_id", "event_type", "created_at"),
            True,
        ),
    ],
)
def test_tables_and_their_natural_keys(
    model: type[base.LensModel], table: str, key: tuple[str, ...], append_only: bool
) -> None:
    assert model._meta.table_name == table
    assert tuple(f.name for f in base.natural_key(model)) == key
    assert model.APPEND_ONLY is append_only
