"""`lens tune apply`: carry out a plan (`changes.py`) — live sysctls through /proc/sys, Lens's
drop-ins written atomically or removed — after saving in the record (`record.py`) what each
thing was before Lens first changed it. A plan with nothing in it writes nothing, the record
included.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from lens.runtime import errors
from lens.tune import record, sysctl
from lens.tune.changes import FileWrite, Plan

FILE_MODE = 0o644


@dataclass(frozen=True, slots=True, kw_only=True)
class Applied:
    """How many live values and files were written."""

    sysctls: int
    files: int


def apply(plan: Plan, *, root: Path, record_file: Path) -> Applied:
    """Carry out `plan` on the host under `root`, keeping the record at `record_file`."""
    if plan.empty:
        return Applied(sysctls=0, files=0)
    saved = record.load(record_file)
    for write in plan.files:
        name = _relative(write.path, root)
        if name not in saved.files:
            saved.files[name] = record.FileBefore(content=write.before, mode=_mode(write.path))
    for live in plan.live:
        first = saved.sysctls.get(live.key)
        before = live.before if first is None else first.before
        saved.sysctls[live.key] = record.SysctlBefore(before=before, written=live.after)
    for write in plan.files:
        if write.after is not None:
            make_folders(write.path.parent, root=root, made=saved.dirs)
    make_folders(record_file.parent, root=root, made=saved.dirs)
    record.save(saved, record_file)
    for live in plan.live:
        sysctl.write_live(root, live.key, live.after)
    for write in plan.files:
        _write_file(write)
    return Applied(sysctls=len(plan.live), files=len(plan.files))


def make_folders(folder: Path, *, root: Path, made: list[str]) -> None:
    """Create `folder` and its missing parents, adding each one made to `made` (relative)."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        try:
            path.mkdir()
        except OSError as exc:
            raise errors.SourceError(f"{path}: cannot create ({exc.strerror})") from None
        made.append(_relative(path, root))


def _write_file(write: FileWrite) -> None:
    if write.after is None:
        try:
            write.path.unlink(missing_ok=True)
        except OSError as exc:
            raise errors.SourceError(f"{write.path}: cannot remove ({exc.strerror})") from None
        return
    record.write_atomically(write.path, write.after, mode=_mode(write.path) or FILE_MODE)


def _mode(path: Path) -> int | None:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise errors.SourceError(f"{path}: cannot read ({exc.strerror})") from None


def _relative(path: Path, root: Path) -> str:
    return str(path.relative_to(root))
