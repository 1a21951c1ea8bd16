from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from lens.cli import app

from .conftest import ARGV_TEXT, assert_no_traceback, assert_one_line, run_lens


def _host(tmp_path: Path, *, max_map_count: int, nofile: int) -> Path:
    root = tmp_path / "host"
    files = {
        "proc/sys/vm/max_map_count": f"{max_map_count}\n",
        "proc/sys/kernel/numa_balancing": "1\n",
        "etc/sysctl.d/10-vm.conf": f"vm.max_map_count = {max_map_count}\n",
        "etc/security/limits.conf": f"* soft nofile {nofile}\n* hard nofile {nofile}\n",
        "etc/systemd/system.conf": f"[Manager]\nDefaultLimitNOFILE={nofile}\n",
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def test_a_tuned_node_is_in_sync_and_exits_0(tmp_path: Path) -> None:
    root = _host(tmp_path, max_map_count=262144, nofile=131072)
    result = run_lens("tune", "check", "--host-root", str(root))
    assert result.returncode == 0, result.stderr
    assert "vm.max_map_count" in result.stdout and "≥ 262144" in result.stdout


def test_drift_exits_1_and_json_names_each_parameter(tmp_path: Path) -> None:
    root = _host(tmp_path, max_map_count=65530, nofile=131072)
    result = run_lens("tune", "check", "--host-root", str(root), "--json")
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["in_sync"] is False
    assert document["parameters"][0] == {
        "name": "vm.max_map_count",
        "place": "live",
        "mode": "at_least",
        "desired": "262144",
        "actual": "65530",
        "in_sync": False,
    }
    assert {(p["place"], p["name"]) for p in document["parameters"][1:]} == {
        ("sysctl.d", "vm.max_map_count")
    } | {
        (place, f"nofile {which}")
        for place in ("systemd", "limits.conf")
        for which in ("soft", "hard")
    }


def test_node_labels_select_a_profile(tmp_path: Path) -> None:
    root = _host(tmp_path, max_map_count=262144, nofile=131072)
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "profiles:\n- name: gpu\n  match: {amd.com/gpu: present}\n"
        "  sysctls: {kernel.numa_balancing: {exactly: 0}}\n"
    )
    plain = run_lens("tune", "check", "--host-root", str(root), "--policy", str(policy))
    assert plain.returncode == 0, plain.stderr
    args = ("--policy", str(policy), "--node-labels", "amd.com/gpu=present", "--json")
    gpu = run_lens("tune", "check", "--host-root", str(root), *args)
    assert gpu.returncode == 1
    parameters = json.loads(gpu.stdout)["parameters"]
    drifted = [(p["name"], p["place"]) for p in parameters if not p["in_sync"]]
    assert drifted == [("kernel.numa_balancing", "live"), ("kernel.numa_balancing", "sysctl.d")]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("sysctls: {vm.nope: {exactly: 1}}\n", "sysctls.vm.nope: a sysctl this kernel offers"),
        ("sysctls: {vm.max_map_count: {at_least: many}}\n", "sysctls.vm.max_map_count: integers"),
        ("nofile: {at_least: -5}\n", "nofile: an integer from 1 to 2147483584"),
    ],
)
def test_a_bad_policy_is_one_line_and_exit_2(tmp_path: Path, policy: str, expected: str) -> None:
    root = _host(tmp_path, max_map_count=262144, nofile=131072)
    path = tmp_path / "policy.yaml"
    path.write_text(policy)
    result = run_lens("tune", "check", "--host-root", str(root), "--policy", str(path))
    assert result.returncode == 2
    assert result.stderr.startswith(f"lens: config error: {path}: {expected}")
    assert result.stderr.count("\n") == 1 and result.stdout == ""


def test_an_unparsable_host_file_is_exit_2_naming_file_and_line(tmp_path: Path) -> None:
    root = _host(tmp_path, max_map_count=262144, nofile=131072)
    (root / "etc/security/limits.conf").write_text("* soft nofile 131072\n* hard nofile many\n")
    result = run_lens("tune", "check", "--host-root", str(root))
    assert result.returncode == 2
    assert result.stderr == (
        f"lens: config error: {root}/etc/security/limits.conf:2: a limit, got 'many'\n"
    )


def test_a_missing_policy_file_and_bad_labels_are_exit_2(tmp_path: Path) -> None:
    root = _host(tmp_path, max_map_count=262144, nofile=131072)
    missing = run_lens("tune", "check", "--host-root", str(root), "--policy", str(tmp_path / "x"))
    assert missing.returncode == 2 and "a readable policy file" in missing.stderr
    labels = run_lens("tune", "check", "--host-root", str(root), "--node-labels", "gpu")
    assert labels.stderr == "lens: config error: --node-labels: gpu: a label as name=value\n"


@pytest.mark.slow_timeout  # in-process commands
@given(st.text(), ARGV_TEXT)
def test_any_policy_and_labels_are_checked_or_refused_in_one_line(
    tmp_path: Path, policy: str, labels: str
) -> None:
    root = tmp_path / "host"
    if not root.exists():
        _host(tmp_path, max_map_count=262144, nofile=131072)
    path = tmp_path / "policy.yaml"
    path.write_text(policy, errors="surrogatepass")
    args = ["tune", "check", "--host-root", str(root), "--policy", str(path)]
    result = CliRunner().invoke(app, [*args, "--node-labels", labels])
    assert_no_traceback(result, codes=(0, 1, 2))
    if result.exit_code == 2:
        assert_one_line(result, "lens: config error: ")


def _bare(tmp_path: Path) -> Path:
    root = tmp_path / "bare"
    (root / "proc/sys/vm").mkdir(parents=True)
    (root / "proc/sys/vm/max_map_count").write_text("65530\n")
    (root / "etc").mkdir()
    return root


def _tree(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in root.rglob("*")
    }


@pytest.mark.slow_timeout  # seven `lens` processes: 5 s was too few beside a busy worker
def test_diff_apply_check_and_restore_round_trip(tmp_path: Path) -> None:
    root = _bare(tmp_path)
    before = _tree(root)
    diff = run_lens("tune", "diff", "--host-root", str(root))
    assert diff.returncode == 1, diff.stderr
    assert "live vm.max_map_count: 65530 -> 262144" in diff.stdout
    assert f"+++ {root}/etc/sysctl.d/99-lens.conf\n" in diff.stdout
    assert "+vm.max_map_count = 262144\n" in diff.stdout
    assert _tree(root) == before  # diff writes nothing

    applied = run_lens("tune", "apply", "--host-root", str(root))
    assert applied.returncode == 0, applied.stderr
    assert "set vm.max_map_count = 262144 (was 65530)" in applied.stdout
    assert f"wrote {root}/etc/systemd/system.conf.d/99-lens.conf" in applied.stdout
    assert run_lens("tune", "check", "--host-root", str(root)).returncode == 0
    again = run_lens("tune", "diff", "--host-root", str(root))
    assert (again.returncode, again.stdout) == (0, "nothing to change\n")
    assert run_lens("tune", "apply", "--host-root", str(root)).stdout == "nothing to change\n"

    restored = run_lens("tune", "restore", "--host-root", str(root))
    assert restored.returncode == 0, restored.stderr
    assert "restored vm.max_map_count" in restored.stdout
    assert _tree(root) == before
    nothing = run_lens("tune", "restore", "--host-root", str(root))
    assert nothing.stdout == "nothing to restore\n"


def test_apply_names_a_conflict_and_exits_1(tmp_path: Path) -> None:
    root = _bare(tmp_path)
    (root / "etc/sysctl.conf").write_text("vm.max_map_count = 65530\n")
    result = run_lens("tune", "apply", "--host-root", str(root))
    assert result.returncode == 1
    assert result.stderr == (
        f"lens: conflict: vm.max_map_count (sysctl.d): {root}/etc/sysctl.conf:1 sets 65530, "
        f"read after {root}/etc/sysctl.d/99-lens.conf\n"
    )


def test_the_policy_and_labels_come_from_the_config_unless_flags_say(tmp_path: Path) -> None:
    root = _host(tmp_path, max_map_count=262144, nofile=131072)
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "profiles: [{match: {gpu: 'yes'}, sysctls: {kernel.numa_balancing: {exactly: 0}}}]\n"
    )
    config = tmp_path / "lens.yaml"
    config.write_text(f"tune: {{policy_file: {policy}, node_labels: 'gpu=yes'}}\n")
    by_config = run_lens("tune", "check", "--host-root", str(root), "--config", str(config))
    assert by_config.returncode == 1 and "kernel.numa_balancing" in by_config.stdout
    flags = ("--config", str(config), "--node-labels", "gpu=no")
    assert run_lens("tune", "check", "--host-root", str(root), *flags).returncode == 0
