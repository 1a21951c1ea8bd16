"""Writing a host tree: values changed in place as sysfs changes them, links, device nodes.

A reader that keeps an attribute open and reads it again from offset 0 (the node agent does,
sysfs.py) sees the new value, as on a real kernel. A new value shorter than the old one is
padded with newlines instead of truncating, so no reader ever sees an empty or torn value;
readers strip whitespace, as they must for the kernel's trailing newline anyway.
"""

from __future__ import annotations

import os
from pathlib import Path


def write(path: Path, content: str | bytes) -> None:
    """Write `content` to `path`: in place when it exists, else created in one rename."""
    text = isinstance(content, str)
    data = content.encode() if isinstance(content, str) else content
    if not _rewrite(path, data, pad=b"\n" if text else b"\0"):
        replace(path, data)


def _rewrite(path: Path, data: bytes, *, pad: bytes, truncate: bool = False) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        os.pwrite(fd, data if truncate else data + pad * max(0, size - len(data)), 0)
        if truncate:
            os.ftruncate(fd, len(data))
    finally:
        os.close(fd)
    return True


def overwrite(path: Path, content: str | bytes) -> None:
    """Put exactly `content` in `path`, in place (a driver answering garbage), or create it."""
    data = content.encode() if isinstance(content, str) else content
    if not _rewrite(path, data, pad=b"", truncate=True):
        replace(path, data)


def replace(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one rename (a new file), creating parent directories."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def link(path: Path, target: Path) -> None:
    """Make `path` a relative symlink to `target` (both inside the tree)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    relative = os.path.relpath(target, path.parent)
    if path.is_symlink() or path.exists():
        if path.is_symlink() and os.readlink(path) == relative:
            return
        path.unlink()
    path.symlink_to(relative)


def device_node(path: Path) -> None:
    """A stand-in for a character device: an empty file where the node would be."""
    if not path.exists():
        write(path, b"")
