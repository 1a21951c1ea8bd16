from __future__ import annotations

from pathlib import Path

import pytest

from lens.runtime import errors
from lens.tune import nofile, planning, rules

from .conftest import put


@pytest.mark.parametrize(
    ("mode", "desired", "actual", "ok"),
    [
        ("at_least", (262144,), (65530,), False),
        ("at_least", (262144,), (262144,), True),
        ("at_least", (262144,), (1048576,), True),
        ("exactly", (0,), (1,), False),
        ("exactly", (0,), (0,), True),
        ("exactly", (1024, 65535), (1024, 65535), True),
        ("exactly", (1024, 65535), (1024, 60999), False),
        ("at_least", (1024, 65535), (2048, 65535), True),
        ("at_least", (1024, 65535), (2048, 6000), False),  # field by field
        ("exactly", (1024, 65535), (1024,), False),
        ("at_least", (1,), None, False),
    ],
)
def test_meets_compares_field_by_field(
    mode: rules.Mode, desired: tuple[int, ...], actual: tuple[int, ...] | None, ok: bool
) -> None:
    assert rules.meets(mode, desired, actual) is ok


def test_sysctls_are_planned_against_live_values() -> None:
    wanted = (
        rules.SysctlRule(key="vm.max_map_count", value=(262144,), mode="at_least"),
        rules.SysctlRule(key="net.ipv4.tcp_congestion_control", value=(1,), mode="exactly"),
    )
    live = {"vm.max_map_count": "65530", "net.ipv4.tcp_congestion_control": "cubic"}
    states = planning.plan_sysctls(wanted, live)
    assert states[0] == planning.ParameterState(
        name="vm.max_map_count",
        place="live",
        mode="at_least",
        desired="262144",
        actual="65530",
        in_sync=False,
    )
    assert planning.describe(states[0]) == "≥ 262144"
    assert states[1].actual == "cubic" and not states[1].in_sync


def test_nofile_is_planned_soft_and_hard_per_place() -> None:
    wanted = rules.NofileRule(value=131072, mode="at_least")
    places = (
        nofile.NofileSetting(place="systemd", soft=1024, hard=524288),
        nofile.NofileSetting(place="containerd", soft=nofile.UNLIMITED, hard=None),
    )
    got = [(s.place, s.name, s.actual, s.in_sync) for s in planning.plan_nofile(wanted, places)]
    assert got == [
        ("systemd", "nofile soft", "1024", False),
        ("systemd", "nofile hard", "524288", True),
        ("containerd", "nofile soft", "unlimited", True),
        ("containerd", "nofile hard", "unset", False),
    ]


def test_check_reads_the_host_and_applies_the_nodes_profiles(host: Path) -> None:
    put(host, "etc/security/limits.conf", "* - nofile 131072\n")
    put(host, "usr/lib/sysctl.d/50-default.conf", "vm.max_map_count = 65530\n")
    put(host, "etc/systemd/system.conf.d/lens.conf", "[Manager]\nDefaultLimitNOFILE=131072\n")
    policy = rules.parse_policy(
        "sysctls: {vm.max_map_count: {at_least: 65530}}\n"
        "profiles: [{match: {gpu: 'true'}, sysctls: {kernel.numa_balancing: {exactly: 0}}}]",
        source="p.yaml",
    )
    plain = planning.check(policy, root=host, labels={}, source="p.yaml")
    assert [(s.name, s.place) for s in plain] == [
        ("vm.max_map_count", "live"),
        ("vm.max_map_count", "sysctl.d"),
    ] + [
        (f"nofile {which}", place)
        for place in ("systemd", "limits.conf")
        for which in ("soft", "hard")
    ]
    assert all(s.in_sync for s in plain)
    gpu = planning.check(policy, root=host, labels={"gpu": "true"}, source="p.yaml")
    assert [(s.name, s.place, s.actual) for s in gpu if not s.in_sync] == [
        ("kernel.numa_balancing", "live", "1"),
        ("kernel.numa_balancing", "sysctl.d", "unset"),
    ]


def test_check_refuses_an_unparsable_sysctl_file(host: Path) -> None:
    put(host, "etc/sysctl.conf", "vm.max_map_count\n")
    with pytest.raises(errors.ConfigError, match=r"sysctl.conf:1: a line 'key = value'"):
        planning.check(rules.DEFAULT_POLICY, root=host, labels={}, source="built-in")
