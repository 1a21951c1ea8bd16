"""What `lens tune apply` would change on the host, computed without writing: live sysctls to
set, Lens's drop-ins to write, change or remove, and the conflicts no drop-in of Lens's can fix
(a file read after Lens's that sets a value the policy refuses). `lens tune diff` prints it.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lens.runtime import errors
from lens.tune import dropins, nofile, places, rules, sysctl


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveWrite:
    """A sysctl set through /proc/sys: its live value and the one it gets."""

    key: str
    before: str
    after: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FileWrite:
    """One of Lens's drop-ins: its content now and after (None: no such file)."""

    path: Path
    before: bytes | None
    after: bytes | None

    def unified(self) -> str:
        """The change as a unified diff."""
        old = _lines(self.before)
        new = _lines(self.after)
        name = str(self.path)
        return "".join(
            difflib.unified_diff(
                old,
                new,
                fromfile=name if self.before is not None else "/dev/null",
                tofile=name if self.after is not None else "/dev/null",
            )
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Conflict:
    """A parameter whose place a file read after Lens's drop-in sets against the policy."""

    parameter: str
    place: str
    detail: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    live: tuple[LiveWrite, ...]
    files: tuple[FileWrite, ...]
    conflicts: tuple[Conflict, ...]

    @property
    def empty(self) -> bool:
        """Nothing to write (conflicts are no writes of Lens's)."""
        return not self.live and not self.files


def plan(policy: rules.Policy, *, root: Path, labels: Mapping[str, str], source: str) -> Plan:
    """Everything apply would do on the host under `root` for a node with `labels`.

    A sysctl key the host lacks, or a host file that cannot be parsed, is a ConfigError."""
    rules.validate_keys(policy, root=root, source=source)
    applying = rules.effective(policy, labels)
    now = {rule.key: sysctl.read_live(root, rule.key) for rule in applying.sysctls}
    live = tuple(filter(None, (_live_write(rule, now[rule.key]) for rule in applying.sysctls)))
    files: list[FileWrite | None] = []
    conflicts: list[Conflict] = []
    for write, found in (
        _sysctl_dropin(applying.sysctls, root, now),
        *_nofile_dropins(applying.nofile, root),
    ):
        files.append(write)
        conflicts += found
    return Plan(live=live, files=tuple(filter(None, files)), conflicts=tuple(conflicts))


def _live_write(rule: rules.SysctlRule, current: str) -> LiveWrite | None:
    fields = sysctl.parse_fields(current)
    if rules.meets(rule.mode, rule.value, fields):
        return None
    after = dropins.target(rule.mode, rule.value, fields)
    return LiveWrite(key=rule.key, before=current, after=" ".join(str(f) for f in after))


def _sysctl_dropin(
    wanted: Sequence[rules.SysctlRule], root: Path, live: Mapping[str, str]
) -> tuple[FileWrite | None, list[Conflict]]:
    files = places.sysctl_files(root)
    earlier = sysctl.settings_of(files.before)
    later = sysctl.settings_of(files.after)
    entries = []
    conflicts = []
    for rule in wanted:
        late = later.get(rule.key)
        if late is not None and not rules.meets(
            rule.mode, rule.value, sysctl.parse_fields(late.value)
        ):
            detail = f"{late.source}:{late.line} sets {late.value}, read after {files.own}"
            conflicts.append(Conflict(parameter=rule.key, place="sysctl.d", detail=detail))
        # What boot would give without Lens's file: the files read before it, else the kernel's
        # default, which the live value stands for (so "at least" never persists less than
        # the node has now).
        set_before = earlier.get(rule.key)
        have = sysctl.parse_fields(set_before.value if set_before else live[rule.key])
        if set_before is None or not rules.meets(rule.mode, rule.value, have):
            wanted_value = dropins.target(rule.mode, rule.value, have)
            if set_before is None or wanted_value != have:
                entries.append((rule.key, wanted_value))
    return _file_write(files.own, dropins.sysctl_text(entries)), conflicts


_NofilePlace = tuple[
    places.Ordered,
    Callable[[Sequence[Path]], nofile.NofileSetting],
    Callable[[dropins.Limits | None], str | None],
]


def _nofile_dropins(
    rule: rules.NofileRule, root: Path
) -> list[tuple[FileWrite | None, list[Conflict]]]:
    """systemd's place first: login sessions (pam_limits) and containerd inherit its limit
    where their own files set none, as it will be once Lens's drop-in is in place."""
    systemd = places.systemd_files(root)
    own_default = _nofile_dropin(rule, systemd, nofile.systemd_of, dropins.systemd_text,
                                 inherited=nofile.SYSTEMD_BUILTIN)  # fmt: skip
    write, conflicts, effective = own_default
    planned = [(write, conflicts)]
    found: list[_NofilePlace] = [(places.limits_files(root), nofile.limits_of, dropins.limits_text)]
    containerd = places.containerd_files(root)
    if containerd is not None:
        found.append((containerd, nofile.containerd_of, dropins.containerd_text))
    for files, read, render in found:
        write, conflicts, _ = _nofile_dropin(rule, files, read, render, inherited=effective)
        planned.append((write, conflicts))
    return planned


def _nofile_dropin(
    rule: rules.NofileRule,
    files: places.Ordered,
    read: Callable[[Sequence[Path]], nofile.NofileSetting],
    render: Callable[[dropins.Limits | None], str | None],
    *,
    inherited: nofile.NofileSetting,
) -> tuple[FileWrite | None, list[Conflict], nofile.NofileSetting]:
    """Lens's drop-in in one place, the conflicts of files read after it, and the limits the
    place will give once the drop-in is in place."""
    late = read(files.after)
    conflicts = [
        Conflict(
            parameter=f"nofile {which}",
            place=late.place,
            detail=f"set to {value} by {', '.join(map(str, files.after))}, read after {files.own}",
        )
        for which, value in (("soft", late.soft), ("hard", late.hard))
        if value is not None and not rules.meets(rule.mode, (rule.value,), (value,))
    ]
    before = nofile.inherit(read(files.before), inherited)
    limits = dropins.nofile_limits(rule, before)
    given = before if limits is None else nofile.NofileSetting(
        place=before.place, soft=limits.soft, hard=limits.hard
    )  # fmt: skip
    effective = nofile.inherit(late, given)
    return _file_write(files.own, render(limits)), conflicts, effective


def _file_write(path: Path, text: str | None) -> FileWrite | None:
    """The change of `path` to `text` (None: removed); None when it has that already."""
    try:
        before: bytes | None = path.read_bytes()
    except FileNotFoundError:
        before = None
    except OSError as exc:
        raise errors.SourceError(f"{path}: cannot read ({exc.strerror})") from None
    after = None if text is None else text.encode()
    return None if before == after else FileWrite(path=path, before=before, after=after)


def _lines(content: bytes | None) -> list[str]:
    if content is None:
        return []
    return content.decode(errors="replace").splitlines(keepends=True)
