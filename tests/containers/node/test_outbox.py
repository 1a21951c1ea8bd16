from __future__ import annotations

from pathlib import Path

from lens.containers.model import Inventory, Source
from lens.containers.node.journal import Journal
from lens.containers.node.outbox import Outbox
from lens.proto._generated.lens.v1 import events_pb2 as pb


def _inventory(n: int) -> Inventory:
    return Inventory(source=Source.CONTAINERD, time=float(n), container_ids=(str(n),))


def test_records_are_numbered_and_stay_until_acknowledged() -> None:
    box = Outbox(boot_id="b1", capacity=10, wall_time=lambda: 100.0)
    for n in range(5):
        box.put(_inventory(n))
    position, batch = box.take(box.first_position(), 3, timeout=0)
    assert [e.sequence for e in batch] == [1, 2, 3] and position == 3
    _, rest = box.take(position, 10, timeout=0)
    assert [e.sequence for e in rest] == [4, 5]
    assert box.acknowledge("b1", 3) == 3
    assert len(box) == 2
    # A reconnect starts again from the oldest unacknowledged record.
    _, again = box.take(box.first_position(), 10, timeout=0)
    assert [e.sequence for e in again] == [4, 5]
    assert box.acknowledge("other-boot", 5) == 0


def test_another_domains_record_shares_the_numbering_and_is_stamped_by_the_outbox() -> None:
    box = Outbox(boot_id="b1", capacity=10, wall_time=lambda: 100.5)
    box.put(_inventory(1))
    report = pb.Record()
    report.gpu_minutes.SetInParent()
    box.put_message(report)
    box.put(_inventory(2))
    _, batch = box.take(0, 10, timeout=0)
    records = [pb.Record.FromString(e.data) for e in batch]
    assert [r.sequence for r in records] == [1, 2, 3]
    assert [r.WhichOneof("body") for r in records] == ["inventory", "gpu_minutes", "inventory"]
    assert (records[1].observed_at.seconds, records[1].observed_at.nanos) == (100, 500_000_000)


def test_a_batch_stays_within_its_bytes_but_always_takes_one_record() -> None:
    box = Outbox(boot_id="b1", capacity=10, wall_time=lambda: 100.0)
    for n in range(4):
        box.put(_inventory(n))
    sizes = [len(e.data) for e in box.take(0, 10, timeout=0)[1]]
    position, batch = box.take(0, 10, timeout=0, max_bytes=sizes[0] + sizes[1] + sizes[2] - 1)
    assert [e.sequence for e in batch] == [1, 2] and position == 2
    position, batch = box.take(position, 10, timeout=0, max_bytes=1)
    assert [e.sequence for e in batch] == [3] and position == 3


def test_a_full_outbox_drops_the_oldest_and_counts_them() -> None:
    dropped: list[int] = []
    box = Outbox(boot_id="b1", capacity=3, wall_time=lambda: 0.0, on_drop=lambda: dropped.append(1))
    for n in range(5):
        box.put(_inventory(n))
    _, batch = box.take(0, 10, timeout=0)
    assert [e.sequence for e in batch] == [3, 4, 5]
    assert (box.dropped, len(dropped), len(box)) == (2, 2, 3)


def test_many_acknowledged_records_are_compacted_away_with_positions_intact() -> None:
    box = Outbox(boot_id="b1", capacity=100_000, wall_time=lambda: 0.0)
    position = 0
    for round_ in range(3):
        for n in range(5000):
            box.put(_inventory(n))
        position, batch = box.take(position, 5000, timeout=0)
        assert batch[-1].sequence == 5000 * (round_ + 1)
        box.acknowledge("b1", batch[-1].sequence)
    assert len(box) == 0


def test_records_of_an_earlier_boot_come_first_in_their_own_batches(tmp_path: Path) -> None:
    first = Outbox(
        boot_id="aaaaaaaa",
        capacity=10,
        wall_time=lambda: 0.0,
        journal=Journal(str(tmp_path), boot_id="aaaaaaaa"),
    )
    first.put(_inventory(1))
    first.put(_inventory(2))
    first.close()  # the process dies with both unacknowledged
    second = Outbox(
        boot_id="bbbbbbbb",
        capacity=10,
        wall_time=lambda: 0.0,
        journal=Journal(str(tmp_path), boot_id="bbbbbbbb"),
    )
    second.put(_inventory(3))
    position, old = second.take(0, 10, timeout=0)
    assert [(e.boot_id, e.sequence) for e in old] == [("aaaaaaaa", 1), ("aaaaaaaa", 2)]
    _, new = second.take(position, 10, timeout=0)
    assert [(e.boot_id, e.sequence) for e in new] == [("bbbbbbbb", 1)]
    second.acknowledge("aaaaaaaa", 2)
    assert not list(tmp_path.glob("aaaaaaaa.*"))
    second.close()
