from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from lens.runtime import errors
from lens.tune import applying, changes, planning, record, rules

from .conftest import put, snapshot

RECORD = "var/lib/lens/tune/record.json"


def _apply(host: Path) -> applying.Applied:
    planned = changes.plan(rules.DEFAULT_POLICY, root=host, labels={}, source="built-in")
    return applying.apply(planned, root=host, record_file=host / RECORD)


def _in_sync(host: Path) -> bool:
    states = planning.check(rules.DEFAULT_POLICY, root=host, labels={}, source="built-in")
    return all(state.in_sync for state in states)


def test_apply_brings_the_host_in_sync_and_a_second_apply_writes_nothing(host: Path) -> None:
    put(host, "etc/security/limits.conf", "# distro\n")
    assert not _in_sync(host)
    assert _apply(host) == applying.Applied(sysctls=1, files=2)
    assert _in_sync(host)
    assert (host / "proc/sys/vm/max_map_count").read_text() == "262144\n"
    assert oct((host / "etc/sysctl.d/99-lens.conf").stat().st_mode & 0o777) == "0o644"
    assert (host / "etc/security/limits.conf").read_text() == "# distro\n"  # others' untouched
    before = {path: os.stat(host / path).st_mtime_ns for path in snapshot(host)}
    assert _apply(host) == applying.Applied(sysctls=0, files=0)
    assert {path: os.stat(host / path).st_mtime_ns for path in snapshot(host)} == before


def test_the_record_keeps_the_first_before_and_the_last_written(host: Path) -> None:
    _apply(host)
    put(host, "proc/sys/vm/max_map_count", "100\n")  # drift
    _apply(host)
    saved = record.load(host / RECORD)
    assert saved.sysctls == {
        "vm.max_map_count": record.SysctlBefore(before="65530", written="262144")
    }
    # Login sessions inherit systemd's default limit, which Lens's system.conf.d drop-in raises:
    # limits.conf needs nothing of its own.
    assert set(saved.files) == {
        "etc/sysctl.d/99-lens.conf",
        "etc/systemd/system.conf.d/99-lens.conf",
    }
    assert all(before.content is None for before in saved.files.values())
    assert "etc/systemd/system.conf.d" in saved.dirs and "var/lib/lens/tune" in saved.dirs


def test_an_existing_own_file_keeps_its_mode_when_rewritten(host: Path) -> None:
    own = put(host, "etc/sysctl.d/99-lens.conf", "vm.max_map_count = 100\n")
    own.chmod(0o600)
    _apply(host)
    assert own.stat().st_mode & 0o777 == 0o600
    assert record.load(host / RECORD).files["etc/sysctl.d/99-lens.conf"] == record.FileBefore(
        content=b"vm.max_map_count = 100\n", mode=0o600
    )


def test_a_read_only_proc_sys_is_a_source_error_naming_it(host: Path) -> None:
    """Root writes through file modes, so as root the file is made immutable instead."""
    live = host / "proc/sys/vm/max_map_count"
    as_root = os.geteuid() == 0
    if as_root:
        subprocess.run(["chattr", "+i", str(live)], check=True)
    else:
        live.chmod(0o444)
    try:
        with pytest.raises(errors.SourceError, match=r"cannot set vm\.max_map_count"):
            _apply(host)
    finally:
        if as_root:
            subprocess.run(["chattr", "-i", str(live)], check=True)
    assert live.read_text() == "65530\n"
