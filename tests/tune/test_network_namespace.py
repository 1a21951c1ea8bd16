"""`lens tune apply` and `restore` for real, as root, in a network namespace made by the test:
net.* sysctls are per namespace, so the kernel's own /proc/sys is written and read back, the
host's values untouched. The host root's proc is the real /proc; its etc a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Four `lens tune` processes and a dozen `ip netns exec` children: seconds each on a loaded host.
pytestmark = pytest.mark.slow_timeout

POLICY = """\
sysctls:
  net.core.somaxconn: {exactly: 8192}
  net.ipv4.ip_local_port_range: {exactly: [20000, 60000]}
  net.ipv4.tcp_keepalive_time: {at_least: 9000}
"""


def _in(namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["ip", "netns", "exec", namespace, *args], capture_output=True, text=True, timeout=60
    )


def _sysctl(namespace: str, key: str) -> str:
    path = "/proc/sys/" + key.replace(".", "/")
    return " ".join(_in(namespace, "cat", path).stdout.split())


@pytest.fixture
def namespace() -> Iterator[str]:
    name = f"lens-tune-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=True)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    host = tmp_path / "host"
    (host / "etc").mkdir(parents=True)
    (host / "proc").symlink_to("/proc")
    return host


def _lens(namespace: str, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _in(namespace, sys.executable, "-m", "lens", "tune", *args, "--host-root", str(root))


def test_net_sysctls_are_applied_and_restored_in_a_real_namespace(
    namespace: str, root: Path, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    keys = ("net.core.somaxconn", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_keepalive_time")
    before = {key: _sysctl(namespace, key) for key in keys}
    on_host = {key: Path("/proc/sys/" + key.replace(".", "/")).read_text() for key in keys}
    assert before["net.ipv4.tcp_keepalive_time"] == "7200"  # a new namespace's default

    applied = _lens(namespace, root, "apply", "--policy", str(policy))
    assert applied.returncode == 0, applied.stderr
    assert {key: _sysctl(namespace, key) for key in keys} == {
        "net.core.somaxconn": "8192",
        "net.ipv4.ip_local_port_range": "20000 60000",
        "net.ipv4.tcp_keepalive_time": "9000",
    }
    assert {key: Path("/proc/sys/" + key.replace(".", "/")).read_text() for key in keys} == on_host
    checked = _lens(namespace, root, "check", "--policy", str(policy))
    assert checked.returncode == 0, checked.stdout
    again = _lens(namespace, root, "apply", "--policy", str(policy))
    assert again.stdout == "nothing to change\n"

    restored = _lens(namespace, root, "restore")
    assert restored.returncode == 0, restored.stderr
    assert {key: _sysctl(namespace, key) for key in keys} == before
    assert sorted(p.name for p in root.iterdir()) == ["etc", "proc"]
    assert list((root / "etc").iterdir()) == []


def test_a_value_the_kernel_refuses_is_one_line_naming_it(
    namespace: str, root: Path, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("sysctls: {net.core.somaxconn: {exactly: 99999999999}}\n")
    before = _sysctl(namespace, "net.core.somaxconn")
    result = _lens(namespace, root, "apply", "--policy", str(policy))
    assert result.returncode == 1
    assert result.stderr == (
        "lens: source error: net.core.somaxconn: the kernel refused '99999999999' (EINVAL)\n"
    )
    assert _sysctl(namespace, "net.core.somaxconn") == before
