"""The tuning policy as data: sysctls and open-file limits, each "at least" or "exactly", plus
profiles that node labels select. Parsed from YAML here; `planning.py` compares it with what
`sysctl.py` and `nofile.py` read. The YAML shape is documented in docs/tune.md.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml

from lens.runtime import errors

Mode = Literal["at_least", "exactly"]
MODES: tuple[Mode, ...] = ("at_least", "exactly")

# Limits of what a sysctl integer can hold (signed and unsigned 64-bit, the widest /proc/sys has).
SYSCTL_MIN = -(2**63)
SYSCTL_MAX = 2**64 - 1
# The kernel's ceiling for fs.nr_open on 64-bit (fs/file.c: INT_MAX rounded down to BITS_PER_LONG);
# RLIMIT_NOFILE cannot go past fs.nr_open, so neither can a policy.
NOFILE_MAX = 2147483584

# One component of a sysctl key: sysctl(8) writes a dot inside a name (a VLAN "eth0.100") as "/".
_COMPONENT = re.compile(r"[A-Za-z0-9_\-/]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class SysctlRule:
    """One sysctl: its key (dotted), the wanted value (one integer per field) and how it is met."""

    key: str
    value: tuple[int, ...]
    mode: Mode


@dataclass(frozen=True, slots=True, kw_only=True)
class NofileRule:
    """The open-file limit (soft and hard) every place that sets it should give."""

    value: int
    mode: Mode


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """Rules added on nodes whose labels include every pair of `match`."""

    name: str
    match: tuple[tuple[str, str], ...]
    sysctls: tuple[SysctlRule, ...] = ()
    nofile: NofileRule | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """The whole policy: base rules, then the profiles in order (a later rule for a key wins)."""

    sysctls: tuple[SysctlRule, ...]
    nofile: NofileRule
    profiles: tuple[Profile, ...] = ()


# The original system tuner's two values (REFERENCE 12).
DEFAULT_POLICY = Policy(
    sysctls=(SysctlRule(key="vm.max_map_count", value=(262144,), mode="at_least"),),
    nofile=NofileRule(value=131072, mode="at_least"),
)


def meets(mode: Mode, desired: Sequence[int], actual: Sequence[int] | None) -> bool:
    """Whether `actual` satisfies the rule, field by field; no value never does."""
    if actual is None or len(actual) != len(desired):
        return False
    if mode == "exactly":
        return tuple(actual) == tuple(desired)
    return all(have >= want for have, want in zip(actual, desired, strict=True))


def valid_key(key: str) -> bool:
    """A dotted sysctl key whose path stays under proc/sys ("/" in a name stands for a dot)."""
    parts = key.split(".")
    if len(parts) < 2 or not all(_COMPONENT.fullmatch(part) for part in parts):
        return False
    return not any(part.replace("/", ".").strip(".") == "" for part in parts)


def sysctl_path(root: Path, key: str) -> Path:
    """Where `key` lives under the host root: dots become slashes, "/" inside a name a dot."""
    parts = [part.replace("/", ".") for part in key.split(".")]
    return root.joinpath("proc", "sys", *parts)


def parse_policy(text: str, *, source: str) -> Policy:
    """The policy in YAML `text`; anything wrong is a ConfigError naming the key."""
    try:
        data = yaml.safe_load(text)
    except RecursionError:
        raise errors.ConfigError(
            source=source, key="", expected="YAML nested less deeply"
        ) from None
    except yaml.YAMLError as exc:
        raise errors.ConfigError(
            source=source, key="", expected=f"YAML ({errors.first_line(exc)})"
        ) from None
    if data is None:
        data = {}
    mapping = _mapping(data, source=source, key="")
    _no_other_keys(mapping, {"sysctls", "nofile", "profiles"}, source=source, prefix="")
    base = DEFAULT_POLICY.sysctls
    if "sysctls" in mapping:
        base = _sysctls(mapping["sysctls"], source=source, prefix="sysctls")
    nofile = DEFAULT_POLICY.nofile
    if "nofile" in mapping:
        nofile = _nofile(mapping["nofile"], source=source, key="nofile")
    profiles = _profiles(mapping.get("profiles", []), source=source)
    return Policy(sysctls=base, nofile=nofile, profiles=profiles)


def validate_keys(policy: Policy, *, root: Path, source: str) -> None:
    """Refuse sysctl keys the host's kernel does not offer (no file under its /proc/sys)."""
    named = [("sysctls", rule) for rule in policy.sysctls]
    for index, profile in enumerate(policy.profiles):
        named += [(f"profiles[{index}].sysctls", rule) for rule in profile.sysctls]
    for prefix, rule in named:
        try:
            present = sysctl_path(root, rule.key).is_file()
        except OSError:
            present = False
        where = f"{prefix}.{rule.key}"
        if not present:
            raise errors.ConfigError(
                source=source,
                key=where,
                expected=f"a sysctl this kernel offers (none under {root})",
            )
        _check_fields(rule, root=root, source=source, where=where)


def _check_fields(rule: SysctlRule, *, root: Path, source: str, where: str) -> None:
    """A value of as many fields as the kernel's (kernel.printk has 4): the kernel would keep
    the fields not given, and the value would never read back as set."""
    try:
        live = sysctl_path(root, rule.key).read_text(errors="replace").split()
    except OSError:
        return  # unreadable (write-only keys): the write tells
    numbers = bool(live) and all(re.fullmatch(r"[+-]?[0-9]+", field) for field in live)
    if numbers and len(live) != len(rule.value):
        raise errors.ConfigError(
            source=source,
            key=where,
            expected=f"{len(live)} integers, as the kernel has (got {len(rule.value)})",
        )


def parse_labels(text: str) -> dict[str, str]:
    """`k=v,k2=v2` (as --node-labels takes it) as a mapping; a pair without "=" is refused."""
    labels: dict[str, str] = {}
    for pair in filter(None, (item.strip() for item in text.split(","))):
        name, equals, value = pair.partition("=")
        if not equals or not name.strip():
            raise errors.ConfigError(
                source="--node-labels", key=pair, expected="a label as name=value"
            )
        labels[name.strip()] = value.strip()
    return labels


def effective(policy: Policy, labels: Mapping[str, str]) -> Policy:
    """The rules that apply on a node with `labels`: the base, then each matching profile's."""
    sysctls = {rule.key: rule for rule in policy.sysctls}
    nofile = policy.nofile
    for profile in policy.profiles:
        if all(labels.get(name) == value for name, value in profile.match):
            sysctls.update((rule.key, rule) for rule in profile.sysctls)
            nofile = profile.nofile or nofile
    return dataclasses.replace(policy, sysctls=tuple(sysctls.values()), nofile=nofile, profiles=())


def _mapping(data: object, *, source: str, key: str) -> dict[str, object]:
    if not isinstance(data, dict) or not all(isinstance(name, str) for name in data):
        raise errors.ConfigError(source=source, key=key, expected="a mapping with text keys")
    return data


def _no_other_keys(
    mapping: dict[str, object], known: set[str], *, source: str, prefix: str
) -> None:
    for name in mapping:
        if name not in known:
            where = f"{prefix}.{name}" if prefix else name
            expected = "one of " + ", ".join(sorted(known))
            raise errors.ConfigError(source=source, key=where, expected=expected)


def _sysctls(data: object, *, source: str, prefix: str) -> tuple[SysctlRule, ...]:
    rules = []
    for key, entry in _mapping(data, source=source, key=prefix).items():
        where = f"{prefix}.{key}"
        if not valid_key(key):
            raise errors.ConfigError(source=source, key=where, expected="a dotted sysctl key")
        mode, value = _mode_and_value(entry, source=source, key=where)
        fields = _fields(value, source=source, key=where)
        rules.append(SysctlRule(key=key, value=fields, mode=mode))
    return tuple(rules)


def _nofile(data: object, *, source: str, key: str) -> NofileRule:
    mode, value = _mode_and_value(data, source=source, key=key)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= NOFILE_MAX:
        raise errors.ConfigError(
            source=source, key=key, expected=f"an integer from 1 to {NOFILE_MAX}, got {value!r}"
        )
    return NofileRule(value=value, mode=mode)


def _profiles(data: object, *, source: str) -> tuple[Profile, ...]:
    if not isinstance(data, list):
        raise errors.ConfigError(source=source, key="profiles", expected="a list of profiles")
    profiles = []
    for index, entry in enumerate(data):
        where = f"profiles[{index}]"
        mapping = _mapping(entry, source=source, key=where)
        known = {"name", "match", "sysctls", "nofile"}
        _no_other_keys(mapping, known, source=source, prefix=where)
        name = mapping.get("name", f"profile {index}")
        match = _mapping(mapping.get("match"), source=source, key=f"{where}.match")
        if not isinstance(name, str) or not match:
            raise errors.ConfigError(
                source=source, key=where, expected="a text name and a non-empty match of labels"
            )
        sysctls = _sysctls(mapping.get("sysctls", {}), source=source, prefix=f"{where}.sysctls")
        nofile = None
        if "nofile" in mapping:
            nofile = _nofile(mapping["nofile"], source=source, key=f"{where}.nofile")
        pairs = tuple(
            (label, _label_value(value, source=source, key=f"{where}.match.{label}"))
            for label, value in match.items()
        )
        profiles.append(Profile(name=name, match=pairs, sysctls=sysctls, nofile=nofile))
    return tuple(profiles)


def _label_value(value: object, *, source: str, key: str) -> str:
    """A label value as Kubernetes writes it: YAML's unquoted true is the label "true"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int):
        return str(value)
    raise errors.ConfigError(source=source, key=key, expected="a label value (text)")


def _mode_and_value(data: object, *, source: str, key: str) -> tuple[Mode, object]:
    expected = "a mapping of exactly one of at_least, exactly to a value"
    if not isinstance(data, dict) or len(data) != 1:
        raise errors.ConfigError(source=source, key=key, expected=expected)
    ((mode, value),) = data.items()
    for known in MODES:
        if mode == known:
            return known, value
    raise errors.ConfigError(source=source, key=key, expected=expected)


def _fields(value: object, *, source: str, key: str) -> tuple[int, ...]:
    """A sysctl value: an integer, or several (a list, or text of whitespace-separated ones)."""
    items: list[object]
    if isinstance(value, str):
        items = list(value.split())
    elif isinstance(value, list):
        items = list(value)
    else:
        items = [value]
    fields = []
    for item in items:
        if isinstance(item, str) and re.fullmatch(r"[+-]?[0-9]+", item.strip()):
            item = int(item)
        if isinstance(item, bool) or not isinstance(item, int):
            raise errors.ConfigError(source=source, key=key, expected=f"integers, got {value!r}")
        if not SYSCTL_MIN <= item <= SYSCTL_MAX:
            raise errors.ConfigError(
                source=source, key=key, expected=f"a 64-bit integer, got {item}"
            )
        fields.append(item)
    if not fields:
        raise errors.ConfigError(source=source, key=key, expected="at least one integer")
    return tuple(fields)
