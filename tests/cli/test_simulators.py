from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .conftest import run_lens, sim_kube, with_client


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
