"""The record of what Lens changed on a host, so `lens tune restore` can put it back: each file's
content and mode before Lens first wrote it, each sysctl's value before Lens first set it and
the one Lens set last, and the folders Lens made. Paths are relative to the host root, so a
record written by the DaemonSet (host root /host) is restored from the host itself (root /).
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from lens.runtime import errors

VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class FileBefore:
    """A file as it was before Lens first wrote it (content None: it did not exist)."""

    content: bytes | None
    mode: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class SysctlBefore:
    """A sysctl's value before Lens first set it, and the value Lens set last."""

    before: str
    written: str


@dataclass(slots=True, kw_only=True)
class Record:
    """Everything Lens changed, by path relative to the host root or by sysctl key."""

    files: dict[str, FileBefore] = field(default_factory=dict)
    sysctls: dict[str, SysctlBefore] = field(default_factory=dict)
    dirs: list[str] = field(default_factory=list)


def load(path: Path) -> Record:
    """The record at `path`; an empty one when there is none. A record that cannot be read is
    a SourceError: restoring from half a record would leave the host neither way."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return Record()
    except OSError as exc:
        raise errors.SourceError(
            f"{path}: cannot read the tuning record ({exc.strerror})"
        ) from None
    try:
        data = json.loads(text)
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
        return Record(
            files={
                entry["path"]: FileBefore(
                    content=_decode(entry["content_base64"]), mode=entry["mode"]
                )
                for entry in data["files"]
            },
            sysctls={
                entry["key"]: SysctlBefore(before=entry["before"], written=entry["written"])
                for entry in data["sysctls"]
            },
            dirs=[str(name) for name in data["dirs"]],
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise errors.SourceError(f"{path}: not a tuning record ({exc})") from None


def save(record: Record, path: Path) -> None:
    """Write the record atomically (a crash leaves the old one or the new one)."""
    document = {
        "version": VERSION,
        "files": [
            {
                "path": name,
                "content_base64": None
                if before.content is None
                else base64.b64encode(before.content).decode(),
                "mode": before.mode,
            }
            for name, before in sorted(record.files.items())
        ],
        "sysctls": [
            {"key": key, "before": entry.before, "written": entry.written}
            for key, entry in sorted(record.sysctls.items())
        ],
        "dirs": record.dirs,
    }
    write_atomically(path, (json.dumps(document, indent=2) + "\n").encode(), mode=0o600)


def write_atomically(path: Path, content: bytes, *, mode: int) -> None:
    """Replace `path` with `content` through a file beside it renamed over it."""
    temporary = path.with_name(f".{path.name}.lens-tmp")
    try:
        with open(temporary, "wb") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise errors.SourceError(f"{path}: cannot write ({exc.strerror})") from None


def _decode(value: object) -> bytes | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("content_base64 is not text")
    return base64.b64decode(value, validate=True)
