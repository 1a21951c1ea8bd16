"""The record of what Lens changed on a host, so `lens tune restore` can put it back: each file's
content and mode before Lens first wrote it, each sysctl's value before Lens first set it and
the one Lens set last, and the folders Lens made. Paths are relative to the host root, so a
record written by the DaemonSet (host root /host) is restored from the host itself (root /).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from lens.runtime import errors
from lens.tune import rules

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
    """The record at `path`; an empty one when there is none. A record that cannot be read, or
    names a path outside the host root or a key no sysctl has, is a SourceError: restoring
    from half a record, or a forged one, would leave the host neither way."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Record()
    except OSError as exc:
        raise errors.SourceError(
            f"{path}: cannot read the tuning record ({exc.strerror})"
        ) from None
    try:
        data = json.loads(raw.decode())
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"not version {VERSION}")
        return Record(
            files={
                _relative_path(entry["path"]): FileBefore(
                    content=_decode(entry["content_base64"]), mode=_mode(entry["mode"])
                )
                for entry in data["files"]
            },
            sysctls={
                _key(entry["key"]): SysctlBefore(
                    before=_text(entry["before"]), written=_text(entry["written"])
                )
                for entry in data["sysctls"]
            },
            dirs=[_relative_path(name) for name in data["dirs"]],
        )
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise errors.SourceError(f"{path}: not a tuning record ({exc})") from None


def _relative_path(value: object) -> str:
    """A path under the host root: relative, without "..", as Lens writes them."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"a path {value!r}")
    parts = PurePosixPath(value).parts
    if value.startswith("/") or any(part in ("..", ".") for part in parts) or "\0" in value:
        raise ValueError(f"a path outside the host root {value!r}")
    return value


def _key(value: object) -> str:
    if not isinstance(value, str) or not rules.valid_key(value):
        raise ValueError(f"a sysctl key {value!r}")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"a sysctl value {value!r}")
    return value


def _mode(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0o7777:
        raise ValueError(f"a file mode {value!r}")
    return value


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
    content = (json.dumps(document, indent=2) + "\n").encode()
    try:
        if path.read_bytes() == content:
            return  # never rewritten with what it holds
    except OSError:
        pass
    write_atomically(path, content, mode=0o600)


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """Hold the host root's lock: one Lens at a time reads and writes the record and what it
    records (the daemon and an operator's `lens tune apply`). flock on the root folder itself,
    so that no lock file is left on the host."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise errors.SourceError(f"{root}: cannot open the host root ({exc.strerror})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


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
