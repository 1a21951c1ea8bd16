"""Changes in folders through Linux inotify, for parts that react to files at once instead of at
their next poll. ctypes on libc: the standard library has no inotify, and a package for three
system calls is not worth a dependency. Only "something changed in one of these folders" is
reported; callers re-read what they watch.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Sequence
from pathlib import Path

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

CHANGES = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF
)  # fmt: skip


class FolderWatch:
    """An inotify descriptor watching folders; a folder that does not exist yet is watched
    through its nearest existing parent until it appears (`refresh()` adds it then)."""

    def __init__(self, folders: Sequence[Path]) -> None:
        """Raises OSError where inotify is unavailable (not Linux, or out of watches)."""
        libc_name = ctypes.util.find_library("c")
        if libc_name is None:
            raise OSError("inotify: no C library found")
        self._libc = ctypes.CDLL(libc_name, use_errno=True)
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            number = ctypes.get_errno()
            raise OSError(number, f"inotify_init1: {os.strerror(number)}")
        self._fd: int = fd
        self._folders = tuple(folders)
        self.refresh()

    def fileno(self) -> int:
        return self._fd

    def refresh(self) -> None:
        """Watch each folder, or its nearest existing parent while it does not exist. Adding a
        watch again is harmless (the kernel keeps one per folder), and a folder deleted and
        made again needs it: its old watch went with it."""
        for folder in self._folders:
            target = folder
            while not target.is_dir() and target != target.parent:
                target = target.parent
            self._libc.inotify_add_watch(self._fd, os.fsencode(target), CHANGES)

    def drain(self) -> int:
        """Read every pending event; how many bytes there were (0: none)."""
        total = 0
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except BlockingIOError:
                return total
            if not chunk:
                return total
            total += len(chunk)

    def close(self) -> None:
        os.close(self._fd)
