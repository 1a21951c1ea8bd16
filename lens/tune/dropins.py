"""What Lens's own drop-in in each place should hold for the policy: the value a rule needs where
the other files of the place do not already meet it, nothing where they do (so Lens never
lowers a value someone set higher), and no file at all when no rule needs one. Pure: the files'
values are read by `changes.py`, which also writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lens.tune import nofile, rules

HEADER = (
    "# Written by `lens tune apply` from the node's tuning policy (docs/tune.md).\n"
    "# Edits are put back; `lens tune restore` removes this file.\n"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """A soft and a hard nofile."""

    soft: int
    hard: int


def target(
    mode: rules.Mode, desired: Sequence[int], actual: Sequence[int] | None
) -> tuple[int, ...]:
    """The value that meets the rule changing `actual` least: the desired one for "exactly",
    each field raised to the desired for "at least"."""
    if mode == "exactly" or actual is None or len(actual) != len(desired):
        return tuple(desired)
    return tuple(max(have, want) for have, want in zip(actual, desired, strict=True))


def nofile_limits(rule: rules.NofileRule, others: nofile.NofileSetting) -> Limits | None:
    """The limits Lens's drop-in sets in a place whose other files give `others`; None when
    they already meet the rule."""
    ok_soft = rules.meets(rule.mode, (rule.value,), _one(others.soft))
    ok_hard = rules.meets(rule.mode, (rule.value,), _one(others.hard))
    if ok_soft and ok_hard:
        return None
    soft = others.soft if ok_soft and others.soft is not None else rule.value
    hard = others.hard if ok_hard and others.hard is not None else rule.value
    # A soft limit above the hard one is refused by systemd and pam_limits alike.
    return Limits(soft=soft, hard=max(soft, hard))


def sysctl_text(entries: Sequence[tuple[str, tuple[int, ...]]]) -> str | None:
    """sysctl.d lines `key = value`; None when there are none."""
    if not entries:
        return None
    lines = [f"{key} = {' '.join(str(field) for field in value)}\n" for key, value in entries]
    return HEADER + "".join(lines)


def systemd_text(limits: Limits | None) -> str | None:
    """A system.conf.d drop-in setting DefaultLimitNOFILE (every service systemd starts)."""
    if limits is None:
        return None
    return HEADER + f"[Manager]\nDefaultLimitNOFILE={_unit_value(limits)}\n"


def containerd_text(limits: Limits | None) -> str | None:
    """A containerd.service.d drop-in setting LimitNOFILE (containerd and its containers)."""
    if limits is None:
        return None
    return HEADER + f"[Service]\nLimitNOFILE={_unit_value(limits)}\n"


def limits_text(limits: Limits | None) -> str | None:
    """A limits.d file giving `*` the soft and hard nofile (login sessions, through PAM)."""
    if limits is None:
        return None
    soft = _limits_value(limits.soft)
    hard = _limits_value(limits.hard)
    return HEADER + f"*\tsoft\tnofile\t{soft}\n*\thard\tnofile\t{hard}\n"


def _unit_value(limits: Limits) -> str:
    soft, hard = (
        "infinity" if value == nofile.UNLIMITED else str(value)
        for value in (limits.soft, limits.hard)
    )
    return soft if soft == hard else f"{soft}:{hard}"


def _limits_value(value: int) -> str:
    return "unlimited" if value == nofile.UNLIMITED else str(value)


def _one(value: int | None) -> tuple[int] | None:
    return None if value is None else (value,)
