"""Writing a host tree: files replaced atomically (readers never see half a value) and links."""

from __future__ import annotations

import os
from pathlib import Path


def write(path: Path, content: str | bytes) -> None:
    """Replace `path` with `content` in one rename, creating parent directories."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode() if isinstance(content, str) else content
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
