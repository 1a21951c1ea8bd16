from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime import errors
from lens.tune import sysctl

from .conftest import put


def test_live_values_are_read_under_the_host_root(host: Path) -> None:
    assert sysctl.read_live(host, "vm.max_map_count") == "65530"
    assert sysctl.read_live(host, "net.ipv4.ip_local_port_range") == "32768\t60999"
    with pytest.raises(errors.SourceError, match=r"cannot read sysctl vm\.nope"):
        sysctl.read_live(host, "vm.nope")


@pytest.mark.parametrize(
    ("text", "fields"),
    [("65530", (65530,)), ("32768\t60999\n", (32768, 60999)), ("-1", (-1,)), ("", None),
     ("cubic reno", None), ("1 x", None)],
)  # fmt: skip
def test_values_are_split_into_integer_fields(text: str, fields: tuple[int, ...] | None) -> None:
    assert sysctl.parse_fields(text) == fields


def test_a_sysctl_file_is_parsed_with_comments_and_both_separators() -> None:
    text = (
        "# comment\n; comment too\n\nvm.max_map_count = 262144\n"
        "-net.ipv4.ip_local_port_range=1024   65535\nnet/ipv4/conf/eth0.100/rp_filter = 2\n"
    )
    settings = sysctl.parse_sysctl_file(text, source="/etc/sysctl.d/a.conf")
    assert [(s.key, s.value, s.line) for s in settings] == [
        ("vm.max_map_count", "262144", 4),
        ("net.ipv4.ip_local_port_range", "1024   65535", 5),
        ("net.ipv4.conf.eth0/100.rp_filter", "2", 6),
    ]


def test_a_line_without_equals_names_file_and_line() -> None:
    # The original tuner panicked on exactly this line (REFERENCE 15.1 #32).
    with pytest.raises(errors.ConfigError) as raised:
        sysctl.parse_sysctl_file("# x\nvm.max_map_count 262144\n", source="/etc/sysctl.conf")
    assert str(raised.value) == "/etc/sysctl.conf:2: a line 'key = value'"


def test_persisted_settings_follow_sysctl_d_precedence(host: Path) -> None:
    put(host, "usr/lib/sysctl.d/50-default.conf", "vm.max_map_count = 1\nkernel.pid_max = 9\n")
    put(host, "etc/sysctl.d/50-default.conf", "vm.max_map_count = 2\n")  # hides the one above
    put(host, "etc/sysctl.d/99-late.conf", "kernel.numa_balancing = 0\n")
    put(host, "etc/sysctl.conf", "kernel.numa_balancing = 1\n")
    found = sysctl.read_persisted(host)
    assert {key: s.value for key, s in found.items()} == {
        "vm.max_map_count": "2",
        "kernel.numa_balancing": "1",
    }
    assert found["kernel.numa_balancing"].source == str(host / "etc/sysctl.conf")


def test_an_unparsable_host_file_is_refused_when_read(host: Path) -> None:
    put(host, "etc/sysctl.d/10-bad.conf", "ok = 1\nbroken\n")
    with pytest.raises(errors.ConfigError, match=r"10-bad.conf:2: a line 'key = value'$"):
        sysctl.read_persisted(host)


@given(st.text())
def test_any_text_is_settings_or_a_config_error(text: str) -> None:
    try:
        settings = sysctl.parse_sysctl_file(text, source="f")
    except errors.ConfigError as exc:
        assert str(exc).startswith("f:")
    else:
        assert all(setting.key and "/" not in setting.key.split(".")[0] for setting in settings)


def test_an_exclusion_line_sets_nothing() -> None:
    """systemd's own 50-default.conf excludes a key from a glob with a bare '-key' line."""
    text = "net.ipv4.conf.*.rp_filter = 2\n-net.ipv4.conf.all.rp_filter\n"
    settings = sysctl.parse_sysctl_file(text, source="50-default.conf")
    assert [(s.key, s.value) for s in settings] == [("net.ipv4.conf.*.rp_filter", "2")]
