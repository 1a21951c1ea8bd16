"""`lens tune restore`: put back what the record (`record.py`) says Lens changed — every file
byte for byte with its mode, every sysctl Lens set to its value before, unless someone set it
to something else since (then it is left and named) — and remove the folders Lens made and the
record itself.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from pathlib import Path

from lens.runtime import errors
from lens.tune import record, sysctl


@dataclass(frozen=True, slots=True, kw_only=True)
class Restored:
    """What was put back, and the sysctls left because they changed since Lens set them."""

    files: tuple[str, ...]
    sysctls: tuple[str, ...]
    left: tuple[str, ...]


def restore(*, root: Path, record_file: Path) -> Restored:
    """Undo Lens's changes on the host under `root` from the record at `record_file`."""
    with record.locked(root):
        return _restore(root, record_file)


def _restore(root: Path, record_file: Path) -> Restored:
    saved = record.load(record_file)
    sysctls = []
    left = []
    for key, entry in sorted(saved.sysctls.items()):
        try:
            now = sysctl.read_live(root, key)
        except errors.SourceError as exc:  # an interface's key, the interface gone
            left.append(f"{key}: no longer readable ({exc})")
            continue
        if sysctl.parse_fields(now) != sysctl.parse_fields(entry.written):
            left.append(f"{key}: {now!r} now, set by someone else after Lens set {entry.written!r}")
            continue
        try:
            sysctl.write_live(root, key, entry.before)
        except errors.SourceError as exc:
            left.append(f"{key}: not set back to {entry.before!r} ({exc})")
            continue
        sysctls.append(key)
    for name, before in sorted(saved.files.items()):
        path = root / name
        if before.content is None:
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:
                raise errors.SourceError(f"{path}: cannot remove ({exc.strerror})") from None
        else:
            record.write_atomically(path, before.content, mode=before.mode or 0o644)
    try:
        record_file.unlink(missing_ok=True)
    except OSError as exc:
        raise errors.SourceError(f"{record_file}: cannot remove ({exc.strerror})") from None
    for name in reversed(saved.dirs):
        _remove_if_empty(root / name)
    return Restored(files=tuple(sorted(saved.files)), sysctls=tuple(sysctls), left=tuple(left))


def _remove_if_empty(folder: Path) -> None:
    """A folder Lens made goes unless something else was put in it since."""
    try:
        folder.rmdir()
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
            raise errors.SourceError(f"{folder}: cannot remove ({exc.strerror})") from None
