from __future__ import annotations

from pathlib import Path

import pytest

from lens.containers.node import journal
from lens.containers.node.journal import Journal
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.runtime import errors


def _records(first: int, count: int) -> list[tuple[int, bytes]]:
    return [(s, pb.Record(sequence=s).SerializeToString()) for s in range(first, first + count)]


def test_a_new_process_gets_back_what_the_previous_one_left(tmp_path: Path) -> None:
    before = Journal(str(tmp_path), boot_id="aaaaaaaa")
    for sequence, data in _records(1, 5):
        before.append(sequence, data)
    before.forget("aaaaaaaa", 2)  # nothing: the segment still holds 3..5
    before.close()
    after = Journal(str(tmp_path), boot_id="bbbbbbbb")
    saved = after.load()
    assert [(s.boot_id, s.sequence) for s in saved] == [("aaaaaaaa", n) for n in range(1, 6)]
    assert [pb.Record.FromString(s.data).sequence for s in saved] == [1, 2, 3, 4, 5]
    after.forget("aaaaaaaa", 5)
    assert list(tmp_path.glob("aaaaaaaa.*")) == []
    after.close()


def test_acknowledged_segments_are_deleted_and_others_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal, "SEGMENT_RECORDS", 3)
    log = Journal(str(tmp_path), boot_id="cccccccc")
    for sequence, data in _records(1, 7):
        log.append(sequence, data)
    assert len(list(tmp_path.glob("*.seg"))) == 3
    log.forget("cccccccc", 4)
    assert len(list(tmp_path.glob("*.seg"))) == 2
    log.close()


def test_a_torn_tail_is_left_out(tmp_path: Path) -> None:
    log = Journal(str(tmp_path), boot_id="dddddddd")
    for sequence, data in _records(1, 3):
        log.append(sequence, data)
    log.close()
    (segment,) = tmp_path.glob("*.seg")
    segment.write_bytes(segment.read_bytes()[:-1])
    saved = Journal(str(tmp_path), boot_id="eeeeeeee").load()
    assert [s.sequence for s in saved] == [1, 2]


def test_a_sequence_the_server_cannot_store_ends_the_segment_there(tmp_path: Path) -> None:
    """A damaged segment may hold any number: one of 2^63 or more (or 0) is never sent."""
    log = Journal(str(tmp_path), boot_id="ffffffff")
    for sequence, data in [
        *_records(1, 2),
        (2**64 - 1, pb.Record(sequence=2**64 - 1).SerializeToString()),
    ]:
        log.append(sequence, data)
    log.append(4, _records(4, 1)[0][1])
    log.close()
    saved = Journal(str(tmp_path), boot_id="99999999").load()
    assert [s.sequence for s in saved] == [1, 2]


def test_an_unusable_directory_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(errors.ConfigError, match=r"events\.journal_dir"):
        Journal(str(tmp_path / "file" / "sub"), boot_id="ffffffff")
