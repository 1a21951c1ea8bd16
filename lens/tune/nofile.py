"""The open-file limit (nofile) as each place on the host sets it, read-only: pam_limits'
limits.conf and limits.d (login sessions), systemd's DefaultLimitNOFILE (every service) and
containerd's LimitNOFILE (its containers). `planning.py` compares them with the policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lens.runtime import errors
from lens.tune import places

# RLIM_INFINITY: what "unlimited" and "infinity" mean.
UNLIMITED = 2**64 - 1

# What systemd (since v240) gives every service when nothing sets DefaultLimitNOFILE.
SYSTEMD_DEFAULT_SOFT = 1024
SYSTEMD_DEFAULT_HARD = 524288

# The places as `lens tune check` names them.
SYSTEMD_PLACE = "systemd"
LIMITS_PLACE = "limits.conf"
CONTAINERD_PLACE = "containerd"


@dataclass(frozen=True, slots=True, kw_only=True)
class NofileSetting:
    """The soft and hard nofile one place gives (None: it sets none)."""

    place: str
    soft: int | None
    hard: int | None


SYSTEMD_BUILTIN = NofileSetting(
    place=SYSTEMD_PLACE, soft=SYSTEMD_DEFAULT_SOFT, hard=SYSTEMD_DEFAULT_HARD
)


def inherit(setting: NofileSetting, parent: NofileSetting) -> NofileSetting:
    """`setting` with what it leaves unset taken from `parent` (a service gets systemd's default;
    a login session, through sshd or getty, and containerd's containers get systemd's)."""
    return NofileSetting(
        place=setting.place,
        soft=parent.soft if setting.soft is None else setting.soft,
        hard=parent.hard if setting.hard is None else setting.hard,
    )


def parse_limit(text: str, *, source: str) -> int:
    """One limit value: an integer, or unlimited/infinity (-1 in limits.conf)."""
    value = text.strip()
    if value.lower() in ("unlimited", "infinity", "-1"):
        return UNLIMITED
    if not value.isascii() or not value.isdigit():
        raise errors.ConfigError(source=source, key="", expected=f"a limit, got {value!r}")
    return int(value)


def parse_limits_conf(text: str, *, source: str) -> tuple[int | None, int | None]:
    """The soft and hard nofile that `*` gets in one limits.conf-style file (the last wins).
    Lines pam_limits skips (another field count, another domain or item) are skipped here too:
    user and @group lines, which pam_limits prefers to `*` for their users, are not read
    (docs/tune.md)."""
    soft: int | None = None
    hard: int | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        fields = line.split()
        if len(fields) != 4 or fields[0] != "*" or fields[2] != "nofile":
            continue
        where = f"{source}:{number}"
        _, kind, _, value = fields
        if kind not in ("soft", "hard", "-"):
            raise errors.ConfigError(
                source=where, key="", expected="a line '* <soft|hard|-> nofile <value>'"
            )
        limit = parse_limit(value, source=where)
        soft = limit if kind in ("soft", "-") else soft
        hard = limit if kind in ("hard", "-") else hard
    return soft, hard


def parse_unit_limit(text: str, *, source: str, section: str, key: str) -> tuple[str, int] | None:
    """The last `key=` value in `[section]` of a systemd ini-style file, unparsed, and its
    line number."""
    current = ""
    found: tuple[str, int] | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            continue
        name, equals, value = line.partition("=")
        if not equals or not current:
            raise errors.ConfigError(
                source=f"{source}:{number}", key="", expected="a line 'Key=value' in a [section]"
            )
        if current == section and name.strip() == key:
            found = value.strip(), number
    return found


def parse_soft_hard(text: str, *, source: str) -> tuple[int, int]:
    """systemd's `LimitNOFILE=`: `n` (both) or `soft:hard`."""
    soft, colon, hard = text.partition(":")
    low = parse_limit(soft, source=source)
    return low, parse_limit(hard, source=source) if colon else low


def read_limits_conf(root: Path) -> NofileSetting:
    """limits.conf and then limits.d/*.conf, in name order, as pam_limits reads them."""
    return limits_of(places.limits_files(root).all)


def read_systemd_default(root: Path) -> NofileSetting:
    """DefaultLimitNOFILE from system.conf and its drop-ins (later names win)."""
    return systemd_of(places.systemd_files(root).all)


def read_containerd(root: Path) -> NofileSetting | None:
    """containerd.service's LimitNOFILE with its drop-ins; None when no unit is installed."""
    files = places.containerd_files(root)
    return None if files is None else containerd_of(files.all)


def read_all(root: Path) -> tuple[NofileSetting, ...]:
    """The nofile every place gives on the host, what it leaves unset inherited (`inherit`)."""
    systemd = inherit(read_systemd_default(root), SYSTEMD_BUILTIN)
    found = [systemd, inherit(read_limits_conf(root), systemd)]
    containerd = read_containerd(root)
    return tuple(found if containerd is None else [*found, inherit(containerd, systemd)])


def limits_of(paths: Sequence[Path]) -> NofileSetting:
    """What `*` gets from these limits.conf-style files read in order."""
    soft: int | None = None
    hard: int | None = None
    for path in paths:
        text = _read(path)
        if text is not None:
            one_soft, one_hard = parse_limits_conf(text, source=str(path))
            soft = soft if one_soft is None else one_soft
            hard = hard if one_hard is None else one_hard
    return NofileSetting(place=LIMITS_PLACE, soft=soft, hard=hard)


def systemd_of(paths: Sequence[Path]) -> NofileSetting:
    """DefaultLimitNOFILE from these system.conf-style files read in order."""
    return _unit_setting(paths, place=SYSTEMD_PLACE, section="Manager", key="DefaultLimitNOFILE")


def containerd_of(paths: Sequence[Path]) -> NofileSetting:
    """LimitNOFILE from containerd's unit and drop-ins read in order."""
    return _unit_setting(paths, place=CONTAINERD_PLACE, section="Service", key="LimitNOFILE")


def _unit_setting(paths: Sequence[Path], *, place: str, section: str, key: str) -> NofileSetting:
    soft: int | None = None
    hard: int | None = None
    for path in paths:
        text = _read(path)
        if text is None:
            continue
        found = parse_unit_limit(text, source=str(path), section=section, key=key)
        if found is None:
            continue
        value, number = found
        if value:
            soft, hard = parse_soft_hard(value, source=f"{path}:{number}: {key}")
        else:  # systemd: an empty assignment resets to the default
            soft = hard = None
    return NofileSetting(place=place, soft=soft, hard=hard)


def _read(path: Path) -> str | None:
    """The file's text, None when it does not exist."""
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise errors.SourceError(f"{path}: cannot read ({exc.strerror})") from None
