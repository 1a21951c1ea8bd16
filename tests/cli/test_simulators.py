from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from typer.testing import CliRunner

from lens.cli import app

from .conftest import (
    ARGV_TEXT,
    assert_no_traceback,
    assert_one_line,
    run_lens,
    sim_kube,
    with_client,
)


def test_sim_kube_serves_the_official_client_until_terminated(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    with sim_kube(kubeconfig) as process:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("simulated Kubernetes API at http://127.0.0.1:")
        assert process.stdout.readline().strip() == f"kubeconfig: {kubeconfig}"
        listed = with_client(
            kubeconfig,
            "names = kubernetes.client.CoreV1Api().list_namespace().items\n"
            "print(sorted(n.metadata.name for n in names))",
        )
        assert "'default'" in listed


def test_sim_node_builds_a_host_tree(tmp_path: Path) -> None:
    result = run_lens(
        "sim", "node", str(tmp_path / "host"), "--gpus", "2", "--rdma", "1", "--partition", "DPX"
    )
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout.strip()
        == f"built gpu-node-0: 2 x MI300X, 1 RDMA devices under {tmp_path / 'host'}"
    )
    assert (tmp_path / "host/sys/class/drm/card1/device/gpu_busy_percent").exists()
    assert (tmp_path / "host/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data").exists()
    listed = subprocess.run(
        [str(tmp_path / "host/opt/rocm/bin/amd-smi"), "list", "--json"],
        capture_output=True,
        text=True,
    )
    assert len(json.loads(listed.stdout)) == 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--vendor", "intel"], "--vendor: expected amd or nvidia"),
        (["--model", "MI250X", "--partition", "CPX"], "does not support compute partition CPX"),
        (["--vendor", "nvidia", "--model", "MI300X"], "is not an nvidia GPU"),
    ],
)
def test_sim_node_refuses_impossible_nodes(tmp_path: Path, args: list[str], message: str) -> None:
    result = run_lens("sim", "node", str(tmp_path), *args)
    assert result.returncode == 2
    assert message in result.stderr


def test_sim_kube_replays_a_scenario(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    with sim_kube(kubeconfig, "--scenario", "small", "--speed", "60") as process:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "scenario small: 2 nodes, 16 GPUs"
        assert process.stdout.readline().startswith("simulated Kubernetes API at")
        process.stdout.readline()
        body = (
            "pods = kubernetes.client.CoreV1Api().list_pod_for_all_namespaces().items\n"
            "print(sum(p.status.phase == 'Running' for p in pods))"
        )
        assert int(with_client(kubeconfig, body).strip()) >= 7


def test_sim_kube_refuses_an_unknown_scenario() -> None:
    result = run_lens("sim", "kube", "--port", "0", "--scenario", "huge")
    assert result.returncode == 2
    assert "unknown scenario 'huge'" in result.stderr


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("--history", "-1"), "--history"),
        (("--speed", "nan"), "--speed"),
        (("--port", "70000"), "--port"),
    ],
)
def test_sim_kube_refuses_impossible_flags(args: tuple[str, ...], flag: str) -> None:
    result = run_lens("sim", "kube", *args)
    assert result.returncode == 2
    assert f"Invalid value for '{flag}'" in result.stderr


def test_sim_node_refuses_a_file_for_a_directory(tmp_path: Path) -> None:
    afile = tmp_path / "file"
    afile.write_text("")
    result = run_lens("sim", "node", str(afile))
    assert result.returncode == 2
    assert result.stderr == f"lens: usage error: DIRECTORY: {afile} exists and is not a directory\n"


def test_sim_kube_on_a_port_in_use_is_one_line() -> None:
    # The bind's OSError was a traceback (issue 16, point 12).
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_lens("sim", "kube", "--port", str(port))
    assert result.returncode == 2
    assert result.stderr.startswith(
        f"lens: usage error: --host/--port: cannot listen on 127.0.0.1:{port}: "
    )
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("where", ["directory", "~nosuchuser-lens/kubeconfig"])
def test_sim_kube_with_an_unwritable_kubeconfig_is_one_line(tmp_path: Path, where: str) -> None:
    target = str(tmp_path) if where == "directory" else where
    result = run_lens("sim", "kube", "--port", "0", "--kubeconfig", target)
    assert result.returncode == 2
    assert result.stderr.startswith(f"lens: usage error: --kubeconfig: cannot write {target}: ")
    assert len(result.stderr.splitlines()) == 1


def test_sim_node_in_a_directory_too_long_for_the_system_is_one_line(tmp_path: Path) -> None:
    # Path.exists() raised OSError (File name too long): a traceback.
    directory = tmp_path / ("a" * 300)
    result = run_lens("sim", "node", str(directory))
    assert result.returncode == 2
    assert result.stderr.startswith(
        f"lens: usage error: DIRECTORY: cannot build the tree in {directory}"
    )
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.slow_timeout  # in-process commands, 40 of them
@given(
    st.lists(
        st.sampled_from(["--vendor", "--model", "--gpus", "--rdma", "--partition", "--seed"]),
        max_size=3,
    ),
    st.lists(ARGV_TEXT, min_size=3, max_size=3),
    ARGV_TEXT,
)
@example(flags=["--model", "--partition"], values=["", "\n", ""], name="")  # fuzz found it
def test_sim_node_builds_or_refuses_any_flags_in_one_line(
    tmp_path: Path, flags: list[str], values: list[str], name: str
) -> None:
    directory = tmp_path / "nodes" / name.replace("/", "_")
    args = ["sim", "node", str(directory)]
    for flag, value in zip(flags, values, strict=False):
        args += [flag, value]
    result = CliRunner().invoke(app, args)
    assert_no_traceback(result, codes=(0, 2))
    if result.stderr.startswith("lens: "):
        assert_one_line(result, "lens: usage error: ")
