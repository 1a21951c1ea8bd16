"""Where each tuned setting is kept on the host: the files of one place (sysctl.d, systemd's
system.conf, pam_limits, containerd's unit) in the order their reader reads them, split around
the drop-in Lens owns there. Lens writes only its own drop-ins, so what it can change in a place
is its file's value; a file read after it still wins, which `changes.py` reports as a conflict.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# Lens's drop-in in every place: "99-" so it comes after the distribution's and most packages'.
OWN_NAME = "99-lens.conf"

# Every folder list is lowest precedence first: a basename in a later folder hides the same
# basename in an earlier one (an entry linked to /dev/null too: it masks the name), and the files
# are then read by basename. systemd-sysctl (sysctl.d(5)) reads /etc/sysctl.conf last.
SYSCTL_DIRS = ("lib/sysctl.d", "usr/lib/sysctl.d", "usr/local/lib/sysctl.d", "run/sysctl.d",
               "etc/sysctl.d")  # fmt: skip
SYSCTL_CONF = "etc/sysctl.conf"
LIMITS_CONF = "etc/security/limits.conf"
LIMITS_DIR = "etc/security/limits.d"
SYSTEM_CONF = "etc/systemd/system.conf"
SYSTEM_CONF_DIRS = ("usr/lib/systemd/system.conf.d", "usr/local/lib/systemd/system.conf.d",
                    "run/systemd/system.conf.d", "etc/systemd/system.conf.d")  # fmt: skip
# systemd's unit search path (systemd.unit(5)); containerd's own install puts its unit in
# /usr/local/lib/systemd/system.
UNIT_DIRS = ("lib/systemd/system", "usr/lib/systemd/system", "usr/local/lib/systemd/system",
             "run/systemd/system", "etc/systemd/system")  # fmt: skip
CONTAINERD_UNIT = "containerd.service"
MASKED = Path("/dev/null")


@dataclass(frozen=True, slots=True, kw_only=True)
class Ordered:
    """One place's files in reading order: those before Lens's drop-in, the drop-in itself
    (which may not exist yet) and those after it, which override it."""

    before: tuple[Path, ...]
    own: Path
    after: tuple[Path, ...]

    @property
    def others(self) -> tuple[Path, ...]:
        """Every file but Lens's, in reading order."""
        return self.before + self.after

    @property
    def all(self) -> tuple[Path, ...]:
        """Every file, Lens's included where it exists."""
        own = (self.own,) if _entry(self.own) else ()
        return self.before + own + self.after


def sysctl_files(root: Path) -> Ordered:
    """systemd-sysctl's order: basenames sorted across the folders, then /etc/sysctl.conf."""
    tail = (root / SYSCTL_CONF,) if _file(root / SYSCTL_CONF) else ()
    dropins = _by_name(root / folder for folder in SYSCTL_DIRS)
    return _around(dropins, root, SYSCTL_DIRS[-1], tail=tail)


def systemd_files(root: Path) -> Ordered:
    """system.conf, then the system.conf.d drop-ins by basename across their folders."""
    head = (root / SYSTEM_CONF,) if _file(root / SYSTEM_CONF) else ()
    dropins = _by_name(root / folder for folder in SYSTEM_CONF_DIRS)
    return _around(dropins, root, SYSTEM_CONF_DIRS[-1], head=head)


def limits_files(root: Path) -> Ordered:
    """pam_limits' order: limits.conf, then limits.d/*.conf by name."""
    head = (root / LIMITS_CONF,) if _file(root / LIMITS_CONF) else ()
    return _around(_by_name([root / LIMITS_DIR]), root, LIMITS_DIR, head=head)


def containerd_files(root: Path) -> Ordered | None:
    """containerd.service (the one systemd picks: /etc first) and its drop-ins by basename;
    None when containerd is not installed (or its unit is masked)."""
    units = [root / folder / CONTAINERD_UNIT for folder in UNIT_DIRS]
    present = [unit for unit in units if _entry(unit)]
    if not present or _masked(present[-1]):
        return None
    folders = [root / folder / f"{CONTAINERD_UNIT}.d" for folder in UNIT_DIRS]
    own_folder = f"{UNIT_DIRS[-1]}/{CONTAINERD_UNIT}.d"
    return _around(_by_name(folders), root, own_folder, head=(present[-1],))


def _by_name(folders: Iterable[Path]) -> dict[str, Path]:
    """The *.conf files of `folders` by basename, a later folder's hiding an earlier one's; a
    name masked (linked to /dev/null) in the folder that wins is not read at all."""
    chosen: dict[str, Path] = {}
    for folder in folders:
        try:
            found = sorted(path for path in folder.glob("*.conf") if _entry(path))
        except OSError:
            found = []
        chosen.update((path.name, path) for path in found)
    return {name: path for name, path in chosen.items() if not _masked(path)}


def _file(path: Path) -> bool:
    """A file to read (a mask, linked to /dev/null, is none)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _entry(path: Path) -> bool:
    """A file, or a link to /dev/null (a mask); a folder entry that cannot be read is neither."""
    try:
        return path.is_file() or _masked(path)
    except OSError:
        return False


def _masked(path: Path) -> bool:
    try:
        return path.is_symlink() and Path(os.readlink(path)) == MASKED
    except OSError:
        return False


def _around(
    dropins: dict[str, Path],
    root: Path,
    own_folder: str,
    *,
    head: tuple[Path, ...] = (),
    tail: tuple[Path, ...] = (),
) -> Ordered:
    own = root / own_folder / OWN_NAME
    names = sorted(name for name in dropins if name != OWN_NAME)
    return Ordered(
        before=head + tuple(dropins[name] for name in names if name < OWN_NAME),
        own=own,
        after=tuple(dropins[name] for name in names if name > OWN_NAME) + tail,
    )


def watched_folders(root: Path) -> tuple[Path, ...]:
    """Every folder whose files a place reads, for a watch to see a change at once."""
    folders = [
        *SYSCTL_DIRS,
        str(Path(SYSCTL_CONF).parent),
        str(Path(LIMITS_CONF).parent),
        LIMITS_DIR,
        str(Path(SYSTEM_CONF).parent),
        *SYSTEM_CONF_DIRS,
        *UNIT_DIRS,
        *(f"{folder}/{CONTAINERD_UNIT}.d" for folder in UNIT_DIRS),
    ]
    return tuple(root / folder for folder in dict.fromkeys(folders))
