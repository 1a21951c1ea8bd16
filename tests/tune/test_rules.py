from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from lens.runtime import errors
from lens.tune import rules

POLICY = """
sysctls:
  vm.max_map_count: {at_least: 262144}
  net.ipv4.ip_local_port_range: {exactly: "1024 65535"}
nofile: {exactly: 1048576}
profiles:
  - name: gpu
    match: {nvidia.com/gpu.present: "true"}
    sysctls:
      kernel.numa_balancing: {exactly: 0}
      vm.max_map_count: {at_least: 1048576}
    nofile: {at_least: 2097152}
"""


def test_a_policy_is_parsed_into_rules() -> None:
    policy = rules.parse_policy(POLICY, source="p.yaml")
    assert policy.sysctls == (
        rules.SysctlRule(key="vm.max_map_count", value=(262144,), mode="at_least"),
        rules.SysctlRule(key="net.ipv4.ip_local_port_range", value=(1024, 65535), mode="exactly"),
    )
    assert policy.nofile == rules.NofileRule(value=1048576, mode="exactly")
    (gpu,) = policy.profiles
    assert gpu.name == "gpu" and gpu.match == (("nvidia.com/gpu.present", "true"),)


def test_an_empty_policy_is_the_original_tuners_two_values() -> None:
    policy = rules.parse_policy("", source="p.yaml")
    assert policy == rules.DEFAULT_POLICY
    assert policy.sysctls[0].key == "vm.max_map_count" and policy.sysctls[0].value == (262144,)
    assert policy.nofile == rules.NofileRule(value=131072, mode="at_least")


def test_profiles_apply_only_on_nodes_whose_labels_match() -> None:
    policy = rules.parse_policy(POLICY, source="p.yaml")
    plain = rules.effective(policy, {"nvidia.com/gpu.present": "false"})
    assert [rule.key for rule in plain.sysctls] == [
        "vm.max_map_count",
        "net.ipv4.ip_local_port_range",
    ]
    gpu = rules.effective(policy, {"nvidia.com/gpu.present": "true", "zone": "a"})
    by_key = {rule.key: rule for rule in gpu.sysctls}
    assert by_key["kernel.numa_balancing"].value == (0,)
    assert by_key["vm.max_map_count"].value == (1048576,)  # the profile's rule wins
    assert gpu.nofile == rules.NofileRule(value=2097152, mode="at_least")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sysctls: {vm.max_map_count: {at_least: lots}}", "p.yaml: sysctls.vm.max_map_count: "),
        ("sysctls: {vm.max_map_count: {at_least: 1.5}}", "p.yaml: sysctls.vm.max_map_count: "),
        ("sysctls: {vm.max_map_count: {at_least: 18446744073709551616}}", "64-bit integer"),
        ("sysctls: {vm.max_map_count: {roughly: 1}}", "exactly one of at_least, exactly"),
        ("sysctls: {vm.max_map_count: 5}", "sysctls.vm.max_map_count"),
        ("sysctls: {vm..x: {exactly: 1}}", "a dotted sysctl key"),
        ("sysctls: {vm.../etc: {exactly: 1}}", "a dotted sysctl key"),
        ("nofile: {at_least: 0}", "p.yaml: nofile: an integer from 1 to 2147483584"),
        ("nofile: {at_least: 2147483585}", "nofile: an integer from 1 to 2147483584"),
        ("nofile: {at_least: true}", "nofile: an integer"),
        ("colour: blue", "p.yaml: colour: one of nofile, profiles, sysctls"),
        ("profiles: [{name: gpu}]", "p.yaml: profiles[0].match: a mapping"),
        ("profiles: [{match: {a: b}, sysctls: {k.x: {exactly: y}}}]", "profiles[0].sysctls.k.x"),
        ("[1, 2]", "p.yaml: a mapping"),
        ("{", "p.yaml: YAML"),
    ],
)
def test_a_bad_entry_is_one_config_error_naming_it(text: str, message: str) -> None:
    with pytest.raises(errors.ConfigError) as raised:
        rules.parse_policy(text, source="p.yaml")
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_keys_are_checked_against_the_hosts_proc_sys(host: Path) -> None:
    good = rules.parse_policy(POLICY.replace("1024 65535", "1 2"), source="p.yaml")
    rules.validate_keys(good, root=host, source="p.yaml")
    unknown = rules.parse_policy("sysctls: {vm.no_such_thing: {exactly: 1}}", source="p.yaml")
    with pytest.raises(errors.ConfigError, match=r"^p.yaml: sysctls.vm.no_such_thing: a sysctl"):
        rules.validate_keys(unknown, root=host, source="p.yaml")
    folder = rules.parse_policy("sysctls: {net.ipv4: {exactly: 1}}", source="p.yaml")
    with pytest.raises(errors.ConfigError, match=r"sysctls\.net\.ipv4: a sysctl"):
        rules.validate_keys(folder, root=host, source="p.yaml")


def test_a_slash_in_a_key_is_a_dot_in_the_file_name(tmp_path: Path) -> None:
    assert rules.sysctl_path(tmp_path, "net.ipv4.conf.eth0/100.rp_filter") == (
        tmp_path / "proc/sys/net/ipv4/conf/eth0.100/rp_filter"
    )


def test_node_labels_are_parsed_and_a_pair_without_equals_refused() -> None:
    assert rules.parse_labels("a=1, b = two,,c=") == {"a": "1", "b": "two", "c": ""}
    with pytest.raises(errors.ConfigError, match="--node-labels: gpu: a label as name=value"):
        rules.parse_labels("gpu")


@given(st.text())
def test_any_text_is_a_policy_or_a_config_error(text: str) -> None:
    try:
        rules.parse_policy(text, source="p.yaml")
    except errors.ConfigError as exc:
        assert str(exc).startswith("p.yaml")


_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(["sysctls", "nofile", "profiles", "vm.max_map_count", "at_least",
                         "exactly", "match", "name", "a.b"]) | st.text(max_size=6),
        inner,
        max_size=3,
    ),
    max_leaves=12,
)  # fmt: skip


@given(_DOCUMENTS)
def test_any_yaml_document_is_a_policy_or_a_config_error(document: object) -> None:
    try:
        rules.parse_policy(yaml.safe_dump(document), source="p.yaml")
    except errors.ConfigError as exc:
        assert str(exc).startswith("p.yaml")


def test_an_unquoted_yaml_boolean_matches_the_label_true() -> None:
    policy = rules.parse_policy(
        "profiles: [{match: {gpu: true}, sysctls: {vm.x: {exactly: 1}}}]\n", source="p"
    )
    assert policy.profiles[0].match == (("gpu", "true"),)
    assert rules.effective(policy, {"gpu": "true"}).sysctls[-1].key == "vm.x"


def test_yaml_nested_too_deep_is_one_line() -> None:
    with pytest.raises(errors.ConfigError, match="nested less deeply"):
        rules.parse_policy("[" * 100_000, source="p")
