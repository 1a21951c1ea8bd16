from __future__ import annotations

from lens.store.models import containers

from .conftest import check_tables


def test_tables_and_their_natural_keys() -> None:
    check_tables(
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
        ]
    )
