from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from lens.cli import app

from .conftest import ARGV_TEXT, assert_no_traceback, assert_one_line, run_lens


@pytest.mark.slow_timeout
def test_gpus_and_rdma_diagnostics_on_a_simulated_node(tmp_path: Path) -> None:
    tree = tmp_path / "node"
    assert run_lens("sim", "node", str(tree), "--gpus", "2", "--rdma", "2").returncode == 0
    table = run_lens("gpus", "--host-root", str(tree))
    assert table.returncode == 0, table.stderr
    assert "2 GPUs" in table.stdout and "AMD Instinct MI300X" in table.stdout
    document = json.loads(run_lens("gpus", "--host-root", str(tree), "--json").stdout)
    assert len(document["gpus"]) == 2 and document["static_facts_source"] == "amd-smi"
    ports = json.loads(run_lens("rdma", "--host-root", str(tree), "--json").stdout)
    assert [d["name"] for d in ports["devices"]] == ["mlx5_0", "mlx5_1"]


def test_gpus_on_a_node_without_gpus_exits_1(tmp_path: Path) -> None:
    result = run_lens("gpus", "--host-root", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.strip() == f"lens: nothing found: no GPUs under {tmp_path}"


@pytest.mark.parametrize("command", ["gpus", "rdma", "containers"])
def test_a_host_root_that_is_no_directory_is_one_line(command: str, tmp_path: Path) -> None:
    afile = tmp_path / "file"
    afile.write_text("")
    result = run_lens(command, "--host-root", str(afile))
    assert result.returncode == 2
    assert (
        result.stderr == f"lens: config error: --host-root: expected a directory, got '{afile}'\n"
    )


def test_an_endless_interval_is_refused(tmp_path: Path) -> None:
    result = run_lens("gpus", "--host-root", str(tmp_path), "--watch", "--interval", "inf")
    assert result.returncode == 2
    assert "Invalid value for '--interval'" in result.stderr


@pytest.mark.slow_timeout  # in-process commands, 40 of them
@given(ARGV_TEXT, st.sampled_from(["gpus", "rdma", "containers"]))
def test_any_host_root_is_read_or_refused_in_one_line(
    tmp_path: Path, name: str, command: str
) -> None:
    # Kept under an empty directory: "." or ".." are directories there, and nothing else is.
    root = tmp_path / "empty" / name.replace("/", "_")
    (tmp_path / "empty").mkdir(exist_ok=True)
    env = {"LENS_SERVICE__DATA_DIR": str(tmp_path), "LENS_CONTAINERS__CONTAINERD_ADDRESS": ""}
    result = CliRunner().invoke(app, [command, "--host-root", str(root)], env=env)
    assert_no_traceback(result, codes=(0, 1, 2))
    if result.exit_code:
        assert_one_line(result, "lens: ")
