"""Unacknowledged event records on disk, so an agent restart resends instead of losing them.

Segment files `<boot_id>.<first sequence>.seg` in one directory, each a run of length-prefixed
lens.v1 Records of one boot. A segment is deleted once every record in it is acknowledged (or
dropped from the bounded outbox). `load()` at start returns what a previous process left, which
the outbox resends under its original boot id and sequences, so the server drops repeats.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
import struct
from pathlib import Path
from typing import BinaryIO

from google.protobuf.message import DecodeError

from lens.containers import wire
from lens.proto._generated.lens.v1 import events_pb2 as pb
from lens.runtime import errors

log = logging.getLogger(__name__)

SEGMENT_RECORDS = 2000
_LENGTH = struct.Struct("<I")
_NAME = re.compile(r"^([0-9a-f-]{8,64})\.(\d{20})\.seg$")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """A numbered record of one agent boot, encoded: as the journal keeps it, the outbox holds it
    and the shipper sends it."""

    boot_id: str
    sequence: int
    data: bytes  # the encoded lens.v1 Record


@dataclasses.dataclass(slots=True, kw_only=True)
class _Segment:
    path: Path
    boot_id: str
    first: int
    last: int


class Journal:
    """Appends records of the current boot; forgets segments below an acknowledged sequence."""

    def __init__(self, directory: str, *, boot_id: str) -> None:
        self._dir = Path(directory)
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise errors.ConfigError(
                source="config", key="events.journal_dir", expected=f"a writable directory ({exc})"
            ) from exc
        self._boot_id = boot_id
        self._segments: list[_Segment] = []
        self._file: BinaryIO | None = None
        self._in_current = 0

    def load(self) -> list[Entry]:
        """Records earlier processes left, oldest boot first, in sequence order."""
        saved: list[Entry] = []
        for path in sorted(self._dir.glob("*.seg"), key=_age):
            match = _NAME.match(path.name)
            if match is None or match.group(1) == self._boot_id:
                continue
            records = _read_segment(path)
            if not records:
                path.unlink(missing_ok=True)
                continue
            boot_id = match.group(1)
            self._segments.append(
                _Segment(path=path, boot_id=boot_id, first=records[0][0], last=records[-1][0])
            )
            saved.extend(Entry(boot_id=boot_id, sequence=n, data=d) for n, d in records)
        return saved

    def append(self, sequence: int, data: bytes) -> None:
        """Keep the encoded record `data`, numbered `sequence`."""
        if self._file is None or self._in_current >= SEGMENT_RECORDS:
            self._rotate(sequence)
        assert self._file is not None
        self._file.write(_LENGTH.pack(len(data)) + data)
        self._segments[-1].last = sequence
        self._in_current += 1

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def forget(self, boot_id: str, through: int) -> None:
        """Delete segments of `boot_id` whose records are all at or below `through`."""
        keep: list[_Segment] = []
        for segment in self._segments:
            if segment.boot_id == boot_id and segment.last <= through:
                if self._file is not None and segment is self._segments[-1]:
                    self._close()
                segment.path.unlink(missing_ok=True)
            else:
                keep.append(segment)
        self._segments = keep

    def forget_boot(self, boot_id: str) -> None:
        self.forget(boot_id, 2**64)

    def close(self) -> None:
        self._close()

    def _rotate(self, first: int) -> None:
        self._close()
        path = self._dir / f"{self._boot_id}.{first:020d}.seg"
        # Unbuffered: a record is in the page cache once put, so a killed agent keeps it.
        self._file = path.open("ab", buffering=0)
        self._in_current = 0
        self._segments.append(_Segment(path=path, boot_id=self._boot_id, first=first, last=first))

    def _close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None


def _age(path: Path) -> tuple[float, str]:
    try:
        return (path.stat().st_mtime, path.name)
    except OSError:
        return (0.0, path.name)


def _read_segment(path: Path) -> list[tuple[int, bytes]]:
    """The whole records of a segment, by sequence; a torn tail (the process died mid-write) is
    left out."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        log.warning(
            "event journal segment unreadable", extra={"path": str(path), "error": str(exc)}
        )
        return []
    records: list[tuple[int, bytes]] = []
    offset = 0
    while offset + _LENGTH.size <= len(data):
        (length,) = _LENGTH.unpack_from(data, offset)
        body = data[offset + _LENGTH.size : offset + _LENGTH.size + length]
        if len(body) < length:
            break
        try:
            sequence = pb.Record.FromString(body).sequence
        except DecodeError:
            sequence = 0
        if not 1 <= sequence <= wire.MAX_SEQUENCE:
            # Damaged: sequences start at 1 and never reach 2^63, which the server cannot store.
            log.warning("event journal segment damaged", extra={"path": str(path)})
            break
        records.append((sequence, body))
        offset += _LENGTH.size + length
    return records
