from __future__ import annotations

import pytest

from lens.tune import dropins, nofile, rules


@pytest.mark.parametrize(
    ("mode", "desired", "actual", "expected"),
    [
        ("at_least", (262144,), (65530,), (262144,)),
        ("at_least", (262144,), None, (262144,)),
        ("at_least", (1024, 65535), (32768, 60999), (32768, 65535)),  # each field raised
        ("exactly", (0,), (1,), (0,)),
        ("exactly", (1024, 65535), (32768, 60999), (1024, 65535)),
        ("at_least", (1024, 65535), (32768,), (1024, 65535)),
    ],
)
def test_target_changes_the_value_least(
    mode: rules.Mode,
    desired: tuple[int, ...],
    actual: tuple[int, ...] | None,
    expected: tuple[int, ...],
) -> None:
    assert dropins.target(mode, desired, actual) == expected


AT_LEAST = rules.NofileRule(value=131072, mode="at_least")


@pytest.mark.parametrize(
    ("soft", "hard", "expected"),
    [
        (131072, 1048576, None),  # already met: no drop-in
        (None, None, dropins.Limits(soft=131072, hard=131072)),
        (1024, 524288, dropins.Limits(soft=131072, hard=524288)),  # the hard one kept
        (262144, 4096, dropins.Limits(soft=262144, hard=262144)),  # never soft above hard
        (nofile.UNLIMITED, None, dropins.Limits(soft=nofile.UNLIMITED, hard=nofile.UNLIMITED)),
    ],
)
def test_nofile_limits_raise_only_what_falls_short(
    soft: int | None, hard: int | None, expected: dropins.Limits | None
) -> None:
    others = nofile.NofileSetting(place="systemd", soft=soft, hard=hard)
    assert dropins.nofile_limits(AT_LEAST, others) == expected


def test_exactly_lowers_a_higher_limit() -> None:
    rule = rules.NofileRule(value=65536, mode="exactly")
    others = nofile.NofileSetting(place="systemd", soft=65536, hard=1048576)
    assert dropins.nofile_limits(rule, others) == dropins.Limits(soft=65536, hard=65536)


def test_each_place_gets_its_own_syntax_and_no_file_without_entries() -> None:
    limits = dropins.Limits(soft=131072, hard=nofile.UNLIMITED)
    assert dropins.systemd_text(limits) == (
        dropins.HEADER + "[Manager]\nDefaultLimitNOFILE=131072:infinity\n"
    )
    assert dropins.containerd_text(dropins.Limits(soft=5, hard=5)) == (
        dropins.HEADER + "[Service]\nLimitNOFILE=5\n"
    )
    assert dropins.limits_text(limits) == (
        dropins.HEADER + "*\tsoft\tnofile\t131072\n*\thard\tnofile\tunlimited\n"
    )
    assert dropins.sysctl_text([("net.ipv4.ip_local_port_range", (1024, 65535))]) == (
        dropins.HEADER + "net.ipv4.ip_local_port_range = 1024 65535\n"
    )
    for render in (dropins.systemd_text, dropins.containerd_text, dropins.limits_text):
        assert render(None) is None
    assert dropins.sysctl_text([]) is None


def test_what_lens_writes_reads_back_as_what_it_meant() -> None:
    limits = dropins.Limits(soft=131072, hard=nofile.UNLIMITED)
    text = dropins.limits_text(limits) or ""
    assert nofile.parse_limits_conf(text, source="x") == (131072, nofile.UNLIMITED)
    unit = dropins.systemd_text(limits) or ""
    found = nofile.parse_unit_limit(unit, source="x", section="Manager", key="DefaultLimitNOFILE")
    assert found is not None
    assert nofile.parse_soft_hard(found[0], source="x") == (131072, nofile.UNLIMITED)
