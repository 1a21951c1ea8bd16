"""Reading a host's sysfs and /dev cheaply and safely, under a configurable host root.

Every collector reads through a HostFiles: paths are host paths ("/sys/class/drm") joined to the
root ("/host" in the DaemonSet, a simulated tree in tests); reads use os.open/os.read (no
Python file objects on the hot path); a missing attribute is None, not an error, because the
kernel hides attributes a device does not support; other OS errors become SourceErrors.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from lens.runtime import errors

_READ_SIZE = 65536  # larger than any sysfs attribute (PAGE_SIZE) and than gpu_metrics
_SHORT_READ = 4096


class ReadError(errors.SourceError):
    """A file exists but could not be read (EPERM during a GPU reset, EIO, ...)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class HostFiles:
    """The host filesystem as seen from `root`."""

    def __init__(self, root: str | Path = "/") -> None:
        self.root = Path(root)
        self._prefix = str(self.root).rstrip("/")

    def path(self, host_path: str) -> Path:
        return self.root / host_path.lstrip("/")

    def _full(self, host_path: str) -> str:
        # Plain string joining: pathlib costs more than the read itself on this path.
        return f"{self._prefix}/{host_path.lstrip('/')}"

    def read_bytes(self, host_path: str) -> bytes | None:
        """The file's content, or None when it does not exist (an unsupported attribute)."""
        try:
            fd = os.open(self._full(host_path), os.O_RDONLY)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ReadError(host_path, os.strerror(exc.errno or errno.EIO)) from exc
        try:
            chunk = os.read(fd, _READ_SIZE)
            if len(chunk) < _SHORT_READ:
                # Less than a page comes back only at the end of the file: the second read
                # that would confirm it is saved (most sysfs attributes are a few bytes).
                return chunk
            chunks = [chunk]
            while chunk:
                chunk = os.read(fd, _READ_SIZE)
                chunks.append(chunk)
            return b"".join(chunks)
        except OSError as exc:
            # ENODATA / EOPNOTSUPP: the driver declines this attribute right now.
            if exc.errno in (errno.ENODATA, errno.EOPNOTSUPP):
                return None
            raise ReadError(host_path, os.strerror(exc.errno or errno.EIO)) from exc
        finally:
            os.close(fd)

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


def parse_int(text: str | None) -> int | None:
    """An integer attribute ("42", "0x1002"), None when absent or not a number."""
    if text is None or not text:
        return None
    try:
        return int(text, 0)
    except ValueError:
        return None


def parse_key_values(text: str | None, separator: str = "=") -> dict[str, str]:
    """`KEY=VALUE` lines (uevent) or `key value` lines (KFD properties)."""
    pairs: dict[str, str] = {}
    for line in (text or "").splitlines():
        key, found, value = line.partition(separator)
        if found:
            pairs[key.strip()] = value.strip()
    return pairs
