"""Reading a host's sysfs and /dev cheaply and safely, under a configurable host root.

Every collector reads through a HostFiles: paths are host paths ("/sys/class/drm") joined to the
root ("/host" in the DaemonSet, a simulated tree in tests); a missing attribute is None, not an
error, because the kernel hides attributes a device does not support; other OS errors become
ReadErrors. A collector reading the same attributes every second uses `keep_open=True`: sysfs
produces an attribute afresh on every read from offset 0, so one pread on a kept descriptor
replaces open, read and close (1.2 µs instead of 10 µs per attribute on a real kernel).
Descriptors of files no longer read are closed by `sweep()`, which such a collector calls once
per collection; a descriptor whose device went away (ENODEV) is reopened once.
"""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path

from lens.runtime import errors

log = logging.getLogger(__name__)

_READ_SIZE = 65536  # larger than any sysfs attribute (PAGE_SIZE) and than gpu_metrics
_SHORT_READ = 4096
_ABSENT = (errno.ENODATA, errno.EOPNOTSUPP)  # the driver declines this attribute right now
_GONE = (errno.ENODEV, errno.ENOENT, errno.ESTALE, errno.EBADF)


class ReadError(errors.SourceError):
    """A file exists but could not be read (EPERM during a GPU reset, EIO, ...)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _read_fd(fd: int) -> bytes:
    """The whole content from offset 0 (sysfs regenerates it on every read from 0)."""
    chunk = os.pread(fd, _READ_SIZE, 0)
    if len(chunk) < _SHORT_READ:
        # Less than a page comes back only at the end of the file: the read that would
        # confirm it is saved (most sysfs attributes are a few bytes).
        return chunk
    chunks = [chunk]
    offset = len(chunk)
    while chunk:
        chunk = os.pread(fd, _READ_SIZE, offset)
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


class HostFiles:
    """The host filesystem as seen from `root`; see the module doc for `keep_open`."""

    def __init__(self, root: str | Path = "/", *, keep_open: bool = False) -> None:
        self.root = Path(root)
        self._prefix = str(self.root).rstrip("/")
        self._keep_open = keep_open
        self._fds: dict[str, int] = {}
        self._used: set[str] = set()

    def path(self, host_path: str) -> Path:
        return self.root / host_path.lstrip("/")

    def _full(self, host_path: str) -> str:
        # Plain string joining: pathlib costs more than the read itself on this path.
        return f"{self._prefix}/{host_path.lstrip('/')}"

    def read_bytes(self, host_path: str) -> bytes | None:
        """The file's content, or None when it does not exist (an unsupported attribute)."""
        full = self._full(host_path)
        if self._keep_open:
            return self._read_kept(host_path, full)
        try:
            fd = os.open(full, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ReadError(host_path, os.strerror(exc.errno or errno.EIO)) from exc
        try:
            return _read_fd(fd)
        except OSError as exc:
            if exc.errno in _ABSENT:
                return None
            raise ReadError(host_path, os.strerror(exc.errno or errno.EIO)) from exc
        finally:
            os.close(fd)

    def _read_kept(self, host_path: str, full: str, *, retry: bool = True) -> bytes | None:
        fd = self._fds.get(full)
        if fd is None:
            try:
                fd = os.open(full, os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                return None
            except OSError as exc:
                if exc.errno == errno.EMFILE:
                    log.warning("out of file descriptors: reading without keeping files open")
                    self._keep_open = False
                    self.close()
                    return self.read_bytes(host_path)
                raise ReadError(host_path, os.strerror(exc.errno or errno.EIO)) from exc
            self._fds[full] = fd
        self._used.add(full)
        try:
            return _read_fd(fd)
        except OSError as exc:
            if exc.errno in _GONE and retry:
                self._forget(full)  # the device went away and may be back: open it again
                return self._read_kept(host_path, full, retry=False)
            if exc.errno in _ABSENT:
                return None
            raise ReadError(host_path, os.strerror(exc.errno or errno.EIO)) from exc

    def _forget(self, full: str) -> None:
        fd = self._fds.pop(full, None)
        self._used.discard(full)
        if fd is not None:
            os.close(fd)

    def sweep(self) -> None:
        """Close the files not read since the last sweep (devices that went away)."""
        for full in [f for f in self._fds if f not in self._used]:
            self._forget(full)
        self._used.clear()

    def close(self) -> None:
        for full in list(self._fds):
            self._forget(full)

    @property
    def open_files(self) -> int:
        return len(self._fds)

    def read_text(self, host_path: str) -> str | None:
        data = self.read_bytes(host_path)
        return None if data is None else data.decode("utf-8", "replace").strip()

    def list(self, host_path: str) -> list[str]:
        """Entry names of a directory, sorted; empty when it does not exist."""
        try:
            return sorted(os.listdir(self._full(host_path)))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ReadError(host_path, os.strerror(exc.errno or errno.EIO)) from exc

    def link_target(self, host_path: str) -> str | None:
        """Where a symlink points (as written), or None when it is not a link."""
        try:
            return os.readlink(self._full(host_path))
        except (FileNotFoundError, OSError):
            return None

    def resolve_name(self, host_path: str) -> str | None:
        """The last component of what a symlink resolves to (e.g. a PCI address)."""
        full = self.path(host_path)
        if not full.exists():
            return None
        return full.resolve().name

    def exists(self, host_path: str) -> bool:
        return os.path.exists(self._full(host_path))


LOWEST = -(2**63)  # the kernel prints s64 ...
HIGHEST = 2**64 - 1  # ... and u64 attributes, nothing wider


def parse_int(text: str | None) -> int | None:
    """An integer attribute ("42", "0x1002"), None when absent, not a number or wider than
    64 bits (such a value is garbage, and would not even convert to a float)."""
    if text is None or not text or len(text) > 80:
        return None
    try:
        value = int(text, 0)
    except ValueError:
        return None
    return value if LOWEST <= value <= HIGHEST else None


def parse_key_values(text: str | None, separator: str = "=") -> dict[str, str]:
    """`KEY=VALUE` lines (uevent) or `key value` lines (KFD properties)."""
    pairs: dict[str, str] = {}
    for line in (text or "").splitlines():
        key, found, value = line.partition(separator)
        if found:
            pairs[key.strip()] = value.strip()
    return pairs
