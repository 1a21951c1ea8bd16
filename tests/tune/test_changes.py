from __future__ import annotations

from pathlib import Path

import pytest

from lens.runtime import errors
from lens.tune import changes, dropins, rules

from .conftest import put


def _plan(host: Path, policy: rules.Policy = rules.DEFAULT_POLICY) -> changes.Plan:
    return changes.plan(policy, root=host, labels={}, source="p.yaml")


def test_a_bare_host_gets_the_live_value_and_a_drop_in_per_place(host: Path) -> None:
    planned = _plan(host)
    assert planned.live == (
        changes.LiveWrite(key="vm.max_map_count", before="65530", after="262144"),
    )
    assert {write.path.relative_to(host): write.after for write in planned.files} == {
        Path("etc/sysctl.d/99-lens.conf"): (
            dropins.HEADER + "vm.max_map_count = 262144\n"
        ).encode(),
        # systemd's own default is 1024:524288: the soft limit raised, the hard one kept.
        Path("etc/systemd/system.conf.d/99-lens.conf"): (
            dropins.HEADER + "[Manager]\nDefaultLimitNOFILE=131072:524288\n"
        ).encode(),
    }
    assert all(write.before is None for write in planned.files)
    assert planned.conflicts == () and not planned.empty


def test_values_others_set_high_enough_are_left_to_them(host: Path) -> None:
    put(host, "proc/sys/vm/max_map_count", "1048576\n")
    put(host, "usr/lib/sysctl.d/10-vm.conf", "vm.max_map_count = 1048576\n")
    put(host, "etc/security/limits.conf", "* - nofile unlimited\n")
    put(host, "etc/systemd/system.conf", "[Manager]\nDefaultLimitNOFILE=1048576\n")
    put(host, "usr/lib/systemd/system/containerd.service", "[Service]\nLimitNOFILE=infinity\n")
    assert _plan(host) == changes.Plan(live=(), files=(), conflicts=())


def test_a_file_read_after_lens_that_sets_too_little_is_a_conflict(host: Path) -> None:
    sysctl_conf = put(host, "etc/sysctl.conf", "# local\nvm.max_map_count = 65530\n")
    late = put(
        host, "etc/systemd/system.conf.d/zz-local.conf", "[Manager]\nDefaultLimitNOFILE=4096\n"
    )
    planned = _plan(host)
    assert [(c.parameter, c.place) for c in planned.conflicts] == [
        ("vm.max_map_count", "sysctl.d"),
        ("nofile soft", "systemd"),
        ("nofile hard", "systemd"),
    ]
    assert planned.conflicts[0].detail == (
        f"{sysctl_conf}:2 sets 65530, read after {host}/etc/sysctl.d/99-lens.conf"
    )
    assert str(late) in planned.conflicts[1].detail
    # Lens's own drop-in is still written: it takes effect once the conflict is removed.
    assert len(planned.files) == 3


def test_a_drop_in_no_longer_needed_is_removed(host: Path) -> None:
    own = put(host, "etc/sysctl.d/99-lens.conf", "vm.max_map_count = 262144\n")
    put(host, "etc/sysctl.d/10-vm.conf", "vm.max_map_count = 524288\n")
    put(host, "proc/sys/vm/max_map_count", "524288\n")
    planned = _plan(host)
    (removal,) = [write for write in planned.files if write.path == own]
    assert removal.after is None and removal.before == b"vm.max_map_count = 262144\n"
    assert removal.unified().splitlines()[:2] == [f"--- {own}", "+++ /dev/null"]
    assert "-vm.max_map_count = 262144" in removal.unified()


def test_exactly_sets_multi_field_values_and_profiles_apply(host: Path) -> None:
    policy = rules.parse_policy(
        "sysctls: {net.ipv4.ip_local_port_range: {exactly: '1024 65535'}}\n"
        "profiles: [{match: {gpu: 'yes'}, sysctls: {kernel.numa_balancing: {exactly: 0}}}]\n",
        source="p.yaml",
    )
    planned = changes.plan(policy, root=host, labels={"gpu": "yes"}, source="p.yaml")
    assert [(w.key, w.before, w.after) for w in planned.live] == [
        ("net.ipv4.ip_local_port_range", "32768\t60999", "1024 65535"),
        ("kernel.numa_balancing", "1", "0"),
    ]


def test_a_key_the_kernel_lacks_is_refused_before_anything(host: Path) -> None:
    policy = rules.parse_policy("sysctls: {vm.nope: {exactly: 1}}\n", source="p.yaml")
    with pytest.raises(errors.ConfigError, match=r"sysctls\.vm\.nope"):
        _plan(host, policy)


def test_systemds_own_hard_limit_is_kept_and_containerd_inherits_the_raised_one(
    host: Path,
) -> None:
    put(host, "etc/systemd/system.conf", "[Manager]\n#DefaultLimitNOFILE=1024:524288\n")
    put(host, "usr/local/lib/systemd/system/containerd.service", "[Service]\nExecStart=x\n")
    planned = _plan(host)
    written = {w.path.relative_to(host): w.after for w in planned.files}
    assert (
        written[Path("etc/systemd/system.conf.d/99-lens.conf")]
        == (dropins.HEADER + "[Manager]\nDefaultLimitNOFILE=131072:524288\n").encode()
    )
    # containerd's unit sets none: it inherits systemd's, raised by Lens's drop-in.
    assert not any("containerd" in str(path) for path in written)


def test_a_containerd_limit_below_the_policy_gets_a_drop_in(host: Path) -> None:
    put(host, "etc/systemd/system/containerd.service", "[Service]\nLimitNOFILE=1024\n")
    written = {w.path.relative_to(host): w.after for w in _plan(host).files}
    assert (
        written[Path("etc/systemd/system/containerd.service.d/99-lens.conf")]
        == (dropins.HEADER + "[Service]\nLimitNOFILE=131072\n").encode()
    )


def test_a_value_set_higher_before_lens_stays_when_a_later_conflict_goes(host: Path) -> None:
    put(host, "etc/sysctl.d/60-search.conf", "vm.max_map_count = 1000000\n")
    put(host, "etc/sysctl.conf", "vm.max_map_count = 100000\n")
    planned = _plan(host)
    assert [c.parameter for c in planned.conflicts] == ["vm.max_map_count"]
    assert not any("sysctl.d" in str(w.path) for w in planned.files)  # 60-search.conf meets


def test_a_kernel_default_above_the_policy_is_persisted_not_lowered(host: Path) -> None:
    put(host, "proc/sys/vm/max_map_count", "1048576\n")  # no file sets it: the kernel's default
    written = {w.path.relative_to(host): w.after for w in _plan(host).files}
    assert (
        written[Path("etc/sysctl.d/99-lens.conf")]
        == (dropins.HEADER + "vm.max_map_count = 1048576\n").encode()
    )


def test_a_masked_file_hides_the_one_it_masks(host: Path) -> None:
    put(host, "usr/lib/sysctl.d/10-vm.conf", "vm.max_map_count = 1048576\n")
    (host / "etc/sysctl.d").mkdir(parents=True, exist_ok=True)
    (host / "etc/sysctl.d/10-vm.conf").symlink_to("/dev/null")
    written = {w.path.relative_to(host): w.after for w in _plan(host).files}
    assert (
        written[Path("etc/sysctl.d/99-lens.conf")]
        == (dropins.HEADER + "vm.max_map_count = 262144\n").encode()
    )


def test_fewer_fields_than_the_kernel_has_are_refused(host: Path) -> None:
    put(host, "proc/sys/kernel/printk", "4\t4\t1\t7\n")
    policy = rules.parse_policy("sysctls: {kernel.printk: {exactly: 3}}\n", source="p.yaml")
    with pytest.raises(errors.ConfigError, match="4 integers, as the kernel has"):
        _plan(host, policy)
