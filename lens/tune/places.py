"""Where each tuned setting is kept on the host: the files of one place (sysctl.d, systemd's
system.conf, pam_limits, containerd's unit) in the order their reader reads them, split around
the drop-in Lens owns there. Lens writes only its own drop-ins, so what it can change in a place
is its file's value; a file read after it still wins, which `changes.py` reports as a conflict.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# Lens's drop-in in every place: "99-" so it comes after the distribution's and most packages'.
OWN_NAME = "99-lens.conf"

# systemd-sysctl's folders, lowest precedence first: a basename in a later folder hides the same
# basename in an earlier one, and /etc/sysctl.conf comes last (sysctl.d(5)).
SYSCTL_DIRS = ("usr/lib/sysctl.d", "run/sysctl.d", "etc/sysctl.d")
SYSCTL_CONF = "etc/sysctl.conf"
LIMITS_CONF = "etc/security/limits.conf"
LIMITS_DIR = "etc/security/limits.d"
SYSTEM_CONF = "etc/systemd/system.conf"
SYSTEM_CONF_DIRS = ("usr/lib/systemd/system.conf.d", "run/systemd/system.conf.d",
                    "etc/systemd/system.conf.d")  # fmt: skip
UNIT_DIRS = ("usr/lib/systemd/system", "lib/systemd/system", "etc/systemd/system")
CONTAINERD_UNIT = "containerd.service"


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
        own = (self.own,) if self.own.is_file() else ()
        return self.before + own + self.after


def sysctl_files(root: Path) -> Ordered:
    """systemd-sysctl's order: basenames sorted across the folders, then /etc/sysctl.conf."""
    tail = (root / SYSCTL_CONF,) if (root / SYSCTL_CONF).is_file() else ()
    dropins = _by_name(root / folder for folder in SYSCTL_DIRS)
    return _around(dropins, root, SYSCTL_DIRS[-1], tail=tail)


def systemd_files(root: Path) -> Ordered:
    """system.conf, then the system.conf.d drop-ins by basename across their folders."""
    head = (root / SYSTEM_CONF,) if (root / SYSTEM_CONF).is_file() else ()
    dropins = _by_name(root / folder for folder in SYSTEM_CONF_DIRS)
    return _around(dropins, root, SYSTEM_CONF_DIRS[-1], head=head)


def limits_files(root: Path) -> Ordered:
    """pam_limits' order: limits.conf, then limits.d/*.conf by name."""
    head = (root / LIMITS_CONF,) if (root / LIMITS_CONF).is_file() else ()
    return _around(_by_name([root / LIMITS_DIR]), root, LIMITS_DIR, head=head)


def containerd_files(root: Path) -> Ordered | None:
    """containerd.service (the one systemd picks: /etc first) and its drop-ins by basename;
    None when containerd is not installed."""
    units = [root / folder / CONTAINERD_UNIT for folder in UNIT_DIRS]
    present = [unit for unit in units if unit.is_file()]
    if not present:
        return None
    folders = [root / folder / f"{CONTAINERD_UNIT}.d" for folder in UNIT_DIRS]
    own_folder = f"{UNIT_DIRS[-1]}/{CONTAINERD_UNIT}.d"
    return _around(_by_name(folders), root, own_folder, head=(present[-1],))


def _by_name(folders: Iterable[Path]) -> dict[str, Path]:
    """The *.conf files of `folders` by basename, a later folder's hiding an earlier one's."""
    chosen: dict[str, Path] = {}
    for folder in folders:
        try:
            found = sorted(path for path in folder.glob("*.conf") if path.is_file())
        except OSError:
            found = []
        chosen.update((path.name, path) for path in found)
    return chosen


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
