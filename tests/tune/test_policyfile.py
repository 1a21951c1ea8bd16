from __future__ import annotations

import os
from pathlib import Path

import pytest

from lens.runtime import errors
from lens.tune import policyfile, rules

GOOD = "sysctls: {vm.max_map_count: {at_least: 1048576}}\n"


def test_no_file_is_the_built_in_policy() -> None:
    assert policyfile.read_policy("") == rules.DEFAULT_POLICY
    assert policyfile.source_name("") == "built-in policy"


def test_an_unreadable_file_is_a_config_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "policy.yaml"
    with pytest.raises(errors.ConfigError, match="readable policy file"):
        policyfile.read_policy(str(missing))


def test_a_changed_file_is_read_again_and_a_bad_one_keeps_the_last_good(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(GOOD)
    watched = policyfile.PolicyFile(str(path))
    assert watched.policy.sysctls[0].value == (1048576,)
    path.write_text("sysctls: {vm.max_map_count: {at_least: 2}}\n")
    assert watched.current().sysctls[0].value == (2,)
    path.write_text("sysctls: {vm.max_map_count: {sometimes: 2}}\n")
    assert watched.current().sysctls[0].value == (2,)
    assert watched.error is not None and "sysctls.vm.max_map_count" in watched.error
    path.write_text(GOOD)
    assert watched.current().sysctls[0].value == (1048576,) and watched.error is None


def test_a_configmap_swap_of_its_symlink_is_seen(tmp_path: Path) -> None:
    """Kubernetes updates a mounted ConfigMap by pointing ..data at a new folder."""
    for version, text in (("v1", GOOD), ("v2", "nofile: {exactly: 65536}\n")):
        (tmp_path / version).mkdir()
        (tmp_path / version / "policy.yaml").write_text(text)
    (tmp_path / "..data").symlink_to("v1")
    (tmp_path / "policy.yaml").symlink_to("..data/policy.yaml")
    watched = policyfile.PolicyFile(str(tmp_path / "policy.yaml"))
    (tmp_path / "..data_tmp").symlink_to("v2")
    os.replace(tmp_path / "..data_tmp", tmp_path / "..data")
    assert watched.current().nofile == rules.NofileRule(value=65536, mode="exactly")
