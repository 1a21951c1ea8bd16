"""`lens tune apply`: carry out a plan (`changes.py`) — live sysctls through /proc/sys, Lens's
drop-ins written atomically or removed — after saving in the record (`record.py`) what each
thing was before Lens first changed it. A plan with nothing in it writes nothing, the record
included.
"""

from __future__ import annotations

import errno
import functools
import os
from collections.abc import Callable
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


class PartlyApplied(errors.SourceError):
    """Some writes failed (each named in the message); the others were made."""

    def __init__(self, applied: Applied, failures: list[str], sysctls: list[str]) -> None:
        super().__init__("; ".join(failures))
        self.applied = applied
        self.sysctls = tuple(sysctls)  # the keys whose live value could not be set


def apply(plan: Plan, *, root: Path, record_file: Path) -> Applied:
    """Carry out `plan` on the host under `root`, keeping the record at `record_file`; one
    write failing does not keep the others from being made (PartlyApplied names it)."""
    if plan.empty:
        return Applied(sysctls=0, files=0)
    with record.locked(root):
        saved = record.load(record_file)
        _remember(plan, saved, root)
        # Folders are recorded before they are made, so a crash cannot leave one unrecorded
        # (but those of the record itself, which must exist for it to be saved).
        folders = missing_folders([w.path.parent for w in plan.files if w.after is not None])
        record_folders = missing_folders([record_file.parent])
        for folder in [*record_folders, *folders]:
            if _relative(folder, root) not in saved.dirs:
                saved.dirs.append(_relative(folder, root))
        _make(record_folders)
        record.save(saved, record_file)
        _make(folders)
        failures: list[str] = []
        files = sum(_attempt(functools.partial(_write_file, w), failures) for w in plan.files)
        refused = [
            w.key
            for w in plan.live
            if not _attempt(functools.partial(sysctl.write_live, root, w.key, w.after), failures)
        ]
    applied = Applied(sysctls=len(plan.live) - len(refused), files=files)
    if failures:
        raise PartlyApplied(applied, failures, refused)
    return applied


def _remember(plan: Plan, saved: record.Record, root: Path) -> None:
    """Each thing's state before Lens first changed it, and the value Lens sets now."""
    for write in plan.files:
        name = _relative(write.path, root)
        if name not in saved.files:
            saved.files[name] = record.FileBefore(content=write.before, mode=_mode(write.path))
    for live in plan.live:
        first = saved.sysctls.get(live.key)
        before = live.before if first is None else first.before
        saved.sysctls[live.key] = record.SysctlBefore(before=before, written=live.after)


def _attempt(write: Callable[[], None], failures: list[str]) -> int:
    try:
        write()
    except errors.SourceError as exc:
        failures.append(str(exc))
        return 0
    return 1


def missing_folders(folders: list[Path]) -> list[Path]:
    """The folders, and their parents, that do not exist yet: parents first, each once."""
    found: list[Path] = []
    for folder in folders:
        chain = []
        while not folder.exists() and folder != folder.parent:
            chain.append(folder)
            folder = folder.parent
        found += [path for path in reversed(chain) if path not in found]
    return found


def _make(folders: list[Path]) -> None:
    for path in folders:
        try:
            path.mkdir(exist_ok=True)
        except OSError as exc:
            raise errors.SourceError(f"{path}: cannot create ({exc.strerror})") from None


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
