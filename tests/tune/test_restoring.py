from __future__ import annotations

from pathlib import Path

from lens.tune import applying, changes, restoring, rules

from .conftest import put, snapshot

RECORD = "var/lib/lens/tune/record.json"


def _apply(host: Path, policy: rules.Policy = rules.DEFAULT_POLICY) -> None:
    planned = changes.plan(policy, root=host, labels={}, source="p.yaml")
    applying.apply(planned, root=host, record_file=host / RECORD)


def test_restore_leaves_every_file_byte_identical_to_before(host: Path) -> None:
    put(host, "etc/security/limits.conf", "*  soft  nofile  1024\n")
    put(host, "etc/systemd/system.conf", "[Manager]\n#DefaultLimitNOFILE=\n")
    put(host, "usr/lib/systemd/system/containerd.service", "[Service]\nLimitNOFILE=1024\n")
    mine = put(host, "etc/sysctl.d/99-lens.conf", "# an operator's file of that name\n")
    mine.chmod(0o640)
    before = snapshot(host)
    policy = rules.parse_policy(
        "sysctls:\n  vm.max_map_count: {at_least: 262144}\n"
        "  net.ipv4.ip_local_port_range: {exactly: [1024, 65535]}\n",
        source="p.yaml",
    )
    _apply(host, policy)
    assert snapshot(host) != before
    _apply(host, policy)
    done = restoring.restore(root=host, record_file=host / RECORD)
    assert snapshot(host) == before
    assert done.sysctls == ("net.ipv4.ip_local_port_range", "vm.max_map_count")
    assert len(done.files) == 4 and done.left == ()


def test_a_sysctl_someone_changed_since_is_left_and_named(host: Path) -> None:
    _apply(host)
    put(host, "proc/sys/vm/max_map_count", "2000000\n")
    done = restoring.restore(root=host, record_file=host / RECORD)
    assert done.sysctls == ()
    assert done.left == (
        "vm.max_map_count: '2000000' now, set by someone else after Lens set '262144'",
    )
    assert (host / "proc/sys/vm/max_map_count").read_text() == "2000000\n"


def test_without_a_record_restore_changes_nothing(host: Path) -> None:
    before = snapshot(host)
    done = restoring.restore(root=host, record_file=host / RECORD)
    assert done == restoring.Restored(files=(), sysctls=(), left=())
    assert snapshot(host) == before


def test_a_folder_lens_made_that_holds_others_files_stays(host: Path) -> None:
    _apply(host)
    other = put(host, "etc/systemd/system.conf.d/50-operator.conf", "[Manager]\n")
    restoring.restore(root=host, record_file=host / RECORD)
    assert other.read_text() == "[Manager]\n"
    assert not (host / "etc/systemd/system.conf.d/99-lens.conf").exists()
    assert not (host / "var/lib/lens").exists()


def test_a_sysctl_gone_since_is_left_and_the_files_restored(host: Path) -> None:
    policy = rules.parse_policy("sysctls: {kernel.numa_balancing: {exactly: 0}}\n", source="p")
    before = snapshot(host / "etc")
    _apply(host, policy)
    (host / "proc/sys/kernel/numa_balancing").unlink()  # the key went with a module
    done = restoring.restore(root=host, record_file=host / RECORD)
    assert done.left == (
        f"kernel.numa_balancing: no longer readable ({host}/proc/sys/kernel/numa_balancing: "
        "cannot read sysctl kernel.numa_balancing (No such file or directory))",
    )
    assert snapshot(host / "etc") == before and not (host / RECORD).exists()
