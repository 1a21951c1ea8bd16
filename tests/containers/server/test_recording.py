from __future__ import annotations

import datetime
from collections.abc import Sequence

import peewee
import pytest

from lens.containers.model import (
    Container,
    ContainerEvent,
    Device,
    EventType,
    Inventory,
    Pod,
    Source,
)
from lens.containers.server.extending import Carried
from lens.containers.server.recording import EventRecorder
from lens.store import models

GPU = Device(type="gpu", name="MI300X", number=0, uuid="g0")


def _event(
    kind: EventType, cid: str, time: float, status: str, code: int | None = None
) -> ContainerEvent:
    container = Container(
        id=cid,
        name="main",
        pod=Pod(uid="u", name="p", namespace="ns"),
        devices=(GPU,),
        created_at=1.0,
        status=status,
        exit_code=code,
    )
    return ContainerEvent(
        type=kind, source=Source.CONTAINERD, container=container, time=time, exit_code=code
    )


def test_a_batch_is_committed_with_its_sequence_and_a_replay_adds_nothing(
    db: peewee.Database,
) -> None:
    recorder = EventRecorder(db, cluster="c1")
    batch = [
        _event(EventType.CREATED, "a", 1.0, "Created"),
        _event(EventType.STARTED, "a", 2.0, "Running"),
        _event(EventType.EXITED, "a", 3.0, "Exit", 2),
        _event(EventType.OBSERVED, "a", 3.0, "Exit", 2),
    ]
    assert recorder.committed("n1", "boot") == 0
    assert recorder.commit(node="n1", boot_id="boot", records=batch, through=4).events == 3
    assert recorder.committed("n1", "boot") == 4
    assert recorder.commit(node="n1", boot_id="boot", records=batch, through=4).events == 0
    (row,) = models.NodeContainer.select()
    assert (row.status, row.exit_code, row.container_name, row.node_name) == (
        "Exit",
        2,
        "main",
        "n1",
    )
    kinds = sorted((e.event_type, e.exit_code) for e in models.NodeContainerEvent.select())
    assert kinds == [("Created", None), ("Exit", 2), ("Running", None)]
    (device,) = models.NodeContainerDevice.select()
    assert (device.device_type, device.device_no, device.device_uuid) == ("gpu", 0, "g0")


def test_an_inventory_closes_live_containers_it_does_not_list(db: peewee.Database) -> None:
    recorder = EventRecorder(db, cluster="c1")
    started = [_event(EventType.STARTED, cid, 2.0, "Running") for cid in ("a", "b")]
    recorder.commit(node="n1", boot_id="boot", records=started, through=2)
    recorder.commit(
        node="n2",
        boot_id="boot2",
        records=[_event(EventType.STARTED, "z", 2.0, "Running")],
        through=1,
    )
    inventory = Inventory(source=Source.CONTAINERD, time=9.0, container_ids=("a",))
    assert recorder.commit(node="n1", boot_id="boot", records=[inventory], through=3).closed == 1
    status = {r.container_id: r.status for r in models.NodeContainer.select()}
    assert status == {"a": "Running", "b": "Deleted", "z": "Running"}
    assert recorder.commit(node="n1", boot_id="boot", records=[inventory], through=4).closed == 0
    deleted = [
        e.container_id for e in models.NodeContainerEvent.select() if e.event_type == "Deleted"
    ]
    assert deleted == ["b"]


def test_an_inventory_judges_only_the_containers_told_of_before_it(db: peewee.Database) -> None:
    recorder = EventRecorder(db, cluster="c1")
    listed_before_a = Inventory(source=Source.CONTAINERD, time=1.5, container_ids=())
    batch = [
        listed_before_a,
        _event(EventType.CREATED, "a", 2.0, "Created"),
        _event(EventType.STARTED, "a", 3.0, "Running"),
    ]
    assert recorder.commit(node="n1", boot_id="boot", records=batch, through=3).closed == 0
    (row,) = models.NodeContainer.select()
    assert row.status == "Running"
    recorder.commit(
        node="n1",
        boot_id="boot",
        records=[_event(EventType.DELETED, "a", 4.0, "Deleted")],
        through=4,
    )
    kinds = sorted(e.event_type for e in models.NodeContainerEvent.select())
    assert kinds == ["Created", "Deleted", "Running"]


def test_a_row_keeps_its_exit_whatever_a_later_batch_says(db: peewee.Database) -> None:
    """Issue 16, point 1: an agent (of before the fix) that lists a task deleted after its exit
    as Created, then tells of the deletion, neither steps the row back nor erases its code; an
    exit inferred with its code unknown adds no second Exit row."""
    recorder = EventRecorder(db, cluster="c1")
    lived = [
        _event(EventType.CREATED, "a", 1.0, "Created"),
        _event(EventType.STARTED, "a", 2.0, "Running"),
        _event(EventType.EXITED, "a", 3.0, "Exit", 3),
    ]
    recorder.commit(node="n1", boot_id="boot", records=lived, through=3)
    relisted = [
        _event(EventType.OBSERVED, "a", 1.0, "Created"),
        _event(EventType.EXITED, "a", 9.0, "Exit"),
    ]
    recorder.commit(node="n1", boot_id="boot2", records=relisted, through=2)
    (row,) = models.NodeContainer.select()
    assert (row.status, row.exit_code) == ("Exit", 3)
    deleted = [_event(EventType.DELETED, "a", 10.0, "Deleted")]
    recorder.commit(node="n1", boot_id="boot2", records=deleted, through=3)
    (row,) = models.NodeContainer.select()
    assert (row.status, row.exit_code) == ("Deleted", 3)
    kinds = sorted((e.event_type, e.exit_code) for e in models.NodeContainerEvent.select())
    assert kinds == [("Created", None), ("Deleted", None), ("Exit", 3), ("Running", None)]


def test_a_start_told_after_the_deletion_changes_nothing_in_one_batch_or_two(
    db: peewee.Database,
) -> None:
    """Issue 16, point 2: stored state follows the lifecycle whatever order events come in."""
    recorder = EventRecorder(db, cluster="c1")
    batch = [
        _event(EventType.CREATED, "a", 1.0, "Created"),
        _event(EventType.EXITED, "a", 3.0, "Exit", 0),
        _event(EventType.DELETED, "a", 4.0, "Deleted", 0),
        _event(EventType.STARTED, "a", 3.5, "Running"),
    ]
    recorder.commit(node="n1", boot_id="boot", records=batch, through=4)
    late = [_event(EventType.STARTED, "a", 3.6, "Running")]
    recorder.commit(node="n1", boot_id="boot", records=late, through=5)
    (row,) = models.NodeContainer.select()
    assert (row.status, row.exit_code) == ("Deleted", 0)
    kinds = sorted(e.event_type for e in models.NodeContainerEvent.select())
    assert kinds == ["Created", "Deleted", "Exit"]


class _Extension:
    """Writes its values as extra event_streams rows, so the test sees what was committed."""

    bodies = frozenset({"devices"})

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.calls: list[str] = []

    def decode(self, record: object) -> object:
        return record

    def prepare(self, node: str, values: Sequence[object]) -> object:
        self.calls.append("prepare")
        return tuple(values)

    def before_write(self, prepared: object) -> None:
        self.calls.append("before_write")

    def write(self, batches: Sequence[tuple[str, object]]) -> None:
        self.calls.append("write")
        now = datetime.datetime.now(datetime.UTC)
        for node, prepared in batches:
            for value in prepared:  # type: ignore[attr-defined]
                models.EventStream.create(
                    cluster="ext",
                    node_name=node,
                    boot_id=str(value),
                    committed_sequence=0,
                    created_at=now,
                    updated_at=now,
                )
        if self.fail:
            raise RuntimeError("the extension's write failed")

    def committed(self, prepared: object) -> None:
        self.calls.append("committed")


def test_an_extensions_records_commit_with_the_batch_in_order_and_are_counted_after(
    db: peewee.Database,
) -> None:
    recorder = EventRecorder(db, cluster="c1")
    extension = _Extension()
    records = [
        Carried(extension, "first"),
        _event(EventType.STARTED, "a", 2.0, "Running"),
        Carried(extension, "second"),
    ]
    recorder.commit(node="n1", boot_id="boot", records=records, through=3)
    assert extension.calls == ["prepare", "before_write", "write", "committed"]
    rows = models.EventStream.select().where(models.EventStream.cluster == "ext")
    assert [r.boot_id for r in rows.order_by(models.EventStream.id)] == ["first", "second"]
    assert recorder.committed("n1", "boot") == 3


def test_an_extension_that_fails_rolls_the_whole_batch_back(db: peewee.Database) -> None:
    recorder = EventRecorder(db, cluster="c1")
    extension = _Extension(fail=True)
    records = [_event(EventType.STARTED, "a", 2.0, "Running"), Carried(extension, "x")]
    with pytest.raises(RuntimeError, match="the extension's write failed"):
        recorder.commit(node="n1", boot_id="boot", records=records, through=2)
    assert "committed" not in extension.calls
    assert recorder.committed("n1", "boot") == 0
    assert models.NodeContainer.select().count() == 0
    assert models.EventStream.select().where(models.EventStream.cluster == "ext").count() == 0


def test_a_restarted_server_rewrites_no_device_row_and_drops_those_no_longer_held(
    db: peewee.Database,
) -> None:
    created, started = (
        _event(EventType.CREATED, "a", 1.0, "Created"),
        _event(EventType.STARTED, "a", 2.0, "Running"),
    )
    regrouped = ContainerEvent(
        type=EventType.OBSERVED,
        source=Source.CONTAINERD,
        container=Container(
            id="a",
            name="main",
            pod=None,
            devices=(Device(type="ib", name="mlx5_0", number=0, uuid="n0"),),
            created_at=1.0,
            status="Running",
        ),
        time=3.0,
    )
    EventRecorder(db, cluster="c1").commit(node="n1", boot_id="b1", records=[created], through=1)
    again = EventRecorder(db, cluster="c1")
    again.commit(node="n1", boot_id="b1", records=[started], through=2)
    again.commit(node="n1", boot_id="b1", records=[regrouped], through=3)
    devices = sorted((d.device_type, d.device_uuid) for d in models.NodeContainerDevice.select())
    assert devices == [("ib", "n0")], "the GPU it no longer holds is gone"
