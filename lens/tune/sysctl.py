"""Sysctls on the host: live values under `<root>/proc/sys`, and the settings that sysctl.d-style
files make at boot (`key = value`). `planning.py` compares both with `rules.py`'s policy.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lens.runtime import errors
from lens.tune import places, rules

_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class SysctlSetting:
    """One `key = value` line of a sysctl.d-style file; `key` always with dots."""

    key: str
    value: str
    source: str
    line: int


def parse_fields(text: str) -> tuple[int, ...] | None:
    """A sysctl value as integers, one per whitespace-separated field; None when not all are."""
    fields = text.split()
    if not fields or not all(_INTEGER.fullmatch(field) for field in fields):
        return None
    return tuple(int(field) for field in fields)


def read_live(root: Path, key: str) -> str:
    """The live value of `key` under the host root (its text, stripped)."""
    path = rules.sysctl_path(root, key)
    try:
        return path.read_text(errors="replace").strip()
    except OSError as exc:
        raise errors.SourceError(f"{path}: cannot read sysctl {key} ({exc.strerror})") from None


def write_live(root: Path, key: str, value: str) -> None:
    """Set `key` through /proc/sys under the host root and check the kernel kept `value`."""
    path = rules.sysctl_path(root, key)
    try:
        with open(path, "w") as stream:
            stream.write(value + "\n")
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise errors.SourceError(f"{key}: the kernel refused {value!r} (EINVAL)") from None
        raise errors.SourceError(
            f"{path}: cannot set {key} ({exc.strerror}; lens tune apply needs root and a "
            "writable /proc/sys: a privileged container)"
        ) from None
    kept = read_live(root, key)
    if parse_fields(kept) != parse_fields(value):
        raise errors.SourceError(f"{key}: the kernel kept {kept!r} when {value!r} was written")


def parse_sysctl_file(text: str, *, source: str) -> tuple[SysctlSetting, ...]:
    """The settings in one sysctl.d-style file; a line that is none is a ConfigError naming
    the file and line."""
    settings = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        key, equals, value = line.partition("=")
        # A leading "-" tells systemd-sysctl to ignore a failure to set the key; alone, without
        # "=", it excludes the key from a glob set earlier (systemd's own 50-default.conf).
        key = key.strip()
        if not equals and key.startswith("-") and key[1:].strip():
            continue
        key = key.removeprefix("-").strip()
        if not equals or not key:
            raise errors.ConfigError(
                source=f"{source}:{number}", key="", expected="a line 'key = value'"
            )
        settings.append(
            SysctlSetting(key=_dotted(key), value=value.strip(), source=source, line=number)
        )
    return tuple(settings)


def read_persisted(root: Path) -> dict[str, SysctlSetting]:
    """What the host's sysctl files set at boot, per key, the winning setting of each."""
    return settings_of(places.sysctl_files(root).all)


def settings_of(paths: Sequence[Path]) -> dict[str, SysctlSetting]:
    """The settings `paths` make when read in this order: per key, the last one."""
    settings: dict[str, SysctlSetting] = {}
    for path in paths:
        for setting in parse_sysctl_file(_read(path), source=str(path)):
            settings[setting.key] = setting
    return settings


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError as exc:
        raise errors.SourceError(f"{path}: cannot read ({exc.strerror})") from None


def _dotted(key: str) -> str:
    """sysctl.d(5): when the first separator is "/", slashes separate and dots are in names."""
    first = re.search(r"[./]", key)
    if first is None or first.group() == ".":
        return key
    return ".".join(part.replace(".", "/") for part in key.split("/"))
