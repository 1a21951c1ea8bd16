from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime import errors
from lens.tune import nofile

from .conftest import put


def test_limits_conf_gives_what_star_gets_and_limits_d_overrides(host: Path) -> None:
    put(
        host,
        "etc/security/limits.conf",
        "# <domain> <type> <item> <value>\n*  soft  nofile  1024\n*  hard  nofile  4096  # x\n"
        "root - nofile 999\n@admin soft core 0\n",
    )
    put(host, "etc/security/limits.d/90-lens.conf", "* soft nofile 131072\n")
    assert nofile.read_limits_conf(host) == nofile.NofileSetting(
        place="limits.conf", soft=131072, hard=4096
    )


def test_a_dash_sets_both_and_unlimited_is_infinity() -> None:
    assert nofile.parse_limits_conf("* - nofile unlimited\n", source="f") == (
        nofile.UNLIMITED,
        nofile.UNLIMITED,
    )


def test_lines_pam_limits_skips_are_skipped() -> None:
    """pam_limits ignores a line of another field count; user and @group lines are not `*`'s."""
    text = "* soft nofile\n@gpu hard nofile 4096\nroot - nofile 99\n* hard nofile 8192\n"
    assert nofile.parse_limits_conf(text, source="f") == (None, 8192)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("\n* medium nofile 5\n", "f:2: a line '* <soft|hard|-> nofile <value>'"),
        ("* soft nofile lots\n", "f:1: a limit, got 'lots'"),
    ],
)
def test_a_bad_limits_line_names_file_and_line(text: str, message: str) -> None:
    with pytest.raises(errors.ConfigError) as raised:
        nofile.parse_limits_conf(text, source="f")
    assert str(raised.value) == message


def test_systemd_default_comes_from_system_conf_and_its_drop_ins(host: Path) -> None:
    assert nofile.read_systemd_default(host) == nofile.NofileSetting(
        place="systemd", soft=None, hard=None
    )
    put(host, "etc/systemd/system.conf", "[Manager]\n#DefaultLimitNOFILE=1024:524288\n")
    put(host, "usr/lib/systemd/system.conf.d/10-a.conf", "[Manager]\nDefaultLimitNOFILE=2048\n")
    put(host, "etc/systemd/system.conf.d/20-b.conf", "[Manager]\nDefaultLimitNOFILE=4096:65536\n")
    assert nofile.read_systemd_default(host) == nofile.NofileSetting(
        place="systemd", soft=4096, hard=65536
    )
    put(host, "etc/systemd/system.conf.d/30-c.conf", "[Manager]\nDefaultLimitNOFILE=\n")
    assert nofile.read_systemd_default(host).soft is None  # an empty value resets


def test_containerd_limit_is_its_unit_with_drop_ins_or_none(host: Path) -> None:
    assert nofile.read_containerd(host) is None
    put(
        host,
        "usr/lib/systemd/system/containerd.service",
        "[Unit]\nA=b\n[Service]\nLimitNOFILE=infinity\n",
    )
    assert nofile.read_containerd(host) == nofile.NofileSetting(
        place="containerd", soft=nofile.UNLIMITED, hard=nofile.UNLIMITED
    )
    put(
        host,
        "etc/systemd/system/containerd.service.d/lens.conf",
        "[Service]\nLimitNOFILE=1048576\n",
    )
    assert nofile.read_containerd(host) == nofile.NofileSetting(
        place="containerd", soft=1048576, hard=1048576
    )
    assert [s.place for s in nofile.read_all(host)] == ["systemd", "limits.conf", "containerd"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[Manager]\nDefaultLimitNOFILE\n", "system.conf:2: a line 'Key=value' in a [section]"),
        ("DefaultLimitNOFILE=1\n", "system.conf:1: a line 'Key=value' in a [section]"),
        (
            "[Manager]\nDefaultLimitNOFILE=1:x\n",
            "system.conf:2: DefaultLimitNOFILE: a limit, got 'x'",
        ),
    ],
)
def test_a_bad_unit_line_names_file_and_line(host: Path, text: str, message: str) -> None:
    put(host, "etc/systemd/system.conf", text)
    with pytest.raises(errors.ConfigError) as raised:
        nofile.read_systemd_default(host)
    assert str(raised.value) == f"{host}/etc/systemd/{message}"


@given(st.text())
def test_any_limits_text_is_limits_or_a_config_error(text: str) -> None:
    try:
        nofile.parse_limits_conf(text, source="f")
    except errors.ConfigError as exc:
        assert str(exc).startswith("f:")


@given(st.text())
def test_any_unit_text_is_a_value_or_a_config_error(text: str) -> None:
    try:
        found = nofile.parse_unit_limit(text, source="f", section="Service", key="LimitNOFILE")
        if found is not None and found[0]:
            nofile.parse_soft_hard(found[0], source="f")
    except errors.ConfigError as exc:
        assert str(exc).startswith("f")
