"""The runtime records are plain immutable values, the same whichever runtime made them."""

from __future__ import annotations

import dataclasses

import pytest

from lens.containers.node.records import ContainerRecord, RuntimeEvent, TaskRecord


def test_records_are_values() -> None:
    record = ContainerRecord(id="c1", labels={}, image="img", spec=b"{}", created_at=1.0)
    assert record.name == "", "containerd has no name of its own; Docker fills it"
    assert record == ContainerRecord(id="c1", labels={}, image="img", spec=b"{}", created_at=1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.id = "c2"  # type: ignore[misc]
    event = RuntimeEvent(topic="/tasks/exit", container_id="c1", time=2.0, exit_status=3)
    assert (event.exec_id, event.exited_at) == ("", None), "the container's own process"
    task = TaskRecord(container_id="c1", status="stopped", pid=0, exit_status=3, exited_at=2.0)
    assert dataclasses.replace(task, status="running") != task
