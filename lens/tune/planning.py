"""Compare the policy (`rules.py`) with what the host has (`sysctl.py`, `nofile.py`): per
parameter the desired and the actual value and whether they agree: what `lens tune check`
prints and the daemon publishes (changes.py computes what apply would write).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lens.tune import nofile, rules, sysctl

# Where a sysctl is set at boot, as `lens tune check` names it.
PERSISTED_PLACE = "sysctl.d"


@dataclass(frozen=True, slots=True, kw_only=True)
class ParameterState:
    """One parameter in one place: `place` is "live" for a sysctl, or where nofile is set."""

    name: str
    place: str
    mode: rules.Mode
    desired: str
    actual: str
    in_sync: bool


def describe(state: ParameterState) -> str:
    """The desired value as a person reads it: "≥ 262144", "= 0", "= 1024 65535"."""
    return ("≥ " if state.mode == "at_least" else "= ") + state.desired


def _text(fields: Sequence[int]) -> str:
    return " ".join(str(field) for field in fields)


def plan_sysctls(
    wanted: Sequence[rules.SysctlRule], live: Mapping[str, str]
) -> tuple[ParameterState, ...]:
    """Each sysctl rule against the live value read for its key."""
    return tuple(
        ParameterState(
            name=rule.key,
            place="live",
            mode=rule.mode,
            desired=_text(rule.value),
            actual=" ".join(live.get(rule.key, "unset").split()),
            in_sync=rules.meets(rule.mode, rule.value, sysctl.parse_fields(live.get(rule.key, ""))),
        )
        for rule in wanted
    )


def plan_persisted(
    wanted: Sequence[rules.SysctlRule], persisted: Mapping[str, sysctl.SysctlSetting]
) -> tuple[ParameterState, ...]:
    """Each sysctl rule against what the sysctl files set at boot (place "sysctl.d")."""
    states = []
    for rule in wanted:
        setting = persisted.get(rule.key)
        value = None if setting is None else setting.value
        states.append(
            ParameterState(
                name=rule.key,
                place=PERSISTED_PLACE,
                mode=rule.mode,
                desired=_text(rule.value),
                actual="unset" if value is None else " ".join(value.split()),
                in_sync=rules.meets(rule.mode, rule.value, sysctl.parse_fields(value or "")),
            )
        )
    return tuple(states)


def plan_nofile(
    wanted: rules.NofileRule, settings: Sequence[nofile.NofileSetting]
) -> tuple[ParameterState, ...]:
    """The soft and the hard limit of each place against the nofile rule."""
    states = []
    for setting in settings:
        for which, value in (("soft", setting.soft), ("hard", setting.hard)):
            states.append(
                ParameterState(
                    name=f"nofile {which}",
                    place=setting.place,
                    mode=wanted.mode,
                    desired=str(wanted.value),
                    actual=_limit_text(value),
                    in_sync=rules.meets(
                        wanted.mode, (wanted.value,), None if value is None else (value,)
                    ),
                )
            )
    return tuple(states)


def check(
    policy: rules.Policy, *, root: Path, labels: Mapping[str, str], source: str
) -> tuple[ParameterState, ...]:
    """Read the host under `root` and compare it with the rules that apply there.

    A sysctl key the host lacks, or a host file that cannot be parsed, is a ConfigError;
    an unreadable file a SourceError.
    """
    rules.validate_keys(policy, root=root, source=source)
    applying = rules.effective(policy, labels)
    persisted = sysctl.read_persisted(root)
    live = {rule.key: sysctl.read_live(root, rule.key) for rule in applying.sysctls}
    places = nofile.read_all(root)
    return (
        plan_sysctls(applying.sysctls, live)
        + plan_persisted(applying.sysctls, persisted)
        + plan_nofile(applying.nofile, places)
    )


def _limit_text(value: int | None) -> str:
    if value is None:
        return "unset"
    return "unlimited" if value == nofile.UNLIMITED else str(value)
