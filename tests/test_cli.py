from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import lens

REPO = Path(__file__).resolve().parents[1]
HEAVY = (
    "kubernetes",
    "grpc",
    "fastapi",
    "uvicorn",
    "psycopg2",
    "pymysql",
    "peewee",
    "prometheus_client",
)


def _lens(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lens", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_help_lists_the_commands_and_imports_nothing_heavy() -> None:
    probe = (
        "import sys, json\n"
        "sys.argv = ['lens', '--help']\n"
        "import lens.cli\n"
        "try:\n"
        "    lens.cli.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert "config" in result.stdout and "db" in result.stdout and "version" in result.stdout
    loaded = set(json.loads(result.stderr.strip().splitlines()[-1]))
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert heavy == []


def test_version() -> None:
    result = _lens("version")
    assert (result.returncode, result.stdout.strip()) == (0, lens.__version__)


def test_config_check_prints_the_effective_config_with_secrets_redacted(tmp_path: Path) -> None:
    config = tmp_path / "lens.yaml"
    config.write_text(
        "database:\n  url: postgresql://lens:hunter2@db.example/lens\nserver:\n  port: 9000\n"
    )
    result = _lens("config", "check", "--config", str(config), env={"LENS_LOGGING__LEVEL": "debug"})
    assert result.returncode == 0, result.stderr
    assert "hunter2" not in result.stdout
    assert "url: postgresql://lens:***@db.example/lens" in result.stdout
    assert "port: 9000" in result.stdout
    assert "level: debug" in result.stdout


@pytest.mark.parametrize(
    ("text", "env", "message"),
    [
        (
            "server:\n  port: lots\n",
            {},
            "lens: config error: {path}: server.port: expected an integer, got string 'lots'",
        ),
        (
            "logging:\n  colour: red\n",
            {},
            "lens: config error: {path}: logging.colour: "
            "unknown key (expected one of: format, level)",
        ),
        (
            "",
            {"LENS_SERVER__PORT": "-1"},
            "lens: config error: environment variable LENS_SERVER__PORT: server.port: "
            "expected a number from 0 to 65535, got -1",
        ),
    ],
)
def test_a_bad_config_prints_one_line_and_exits_2(
    tmp_path: Path, text: str, env: dict[str, str], message: str
) -> None:
    path = tmp_path / "lens.yaml"
    path.write_text(text)
    result = _lens("config", "check", "-c", str(path), env=env)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [message.format(path=path)]


def test_lens_config_environment_variable_is_the_default_file(tmp_path: Path) -> None:
    path = tmp_path / "lens.yaml"
    path.write_text("cluster:\n  name: prod-west\n")
    result = _lens("config", "check", env={"LENS_CONFIG": str(path)})
    assert "name: prod-west" in result.stdout


def test_config_example_matches_the_committed_file() -> None:
    assert _lens("config", "example").stdout == (REPO / "config.example.yaml").read_text()


def test_db_migrate_and_status_on_the_embedded_default(tmp_path: Path) -> None:
    env = {"LENS_SERVICE__DATA_DIR": str(tmp_path), "LENS_LOGGING__FORMAT": "json"}
    before = _lens("db", "status", "--check", env=env)
    assert before.returncode == 1
    assert "pending" in before.stdout
    first = _lens("db", "migrate", env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip().startswith("applied 2 migration(s): 0001_initial, 0002_")
    logged = [json.loads(line) for line in first.stderr.splitlines()]
    assert {"msg": "migration applied", "migration": "0001_initial"}.items() <= logged[-2].items()
    assert (tmp_path / "lens.db").exists()
    second = _lens("db", "migrate", env=env)
    assert second.stdout.strip() == "schema is up to date"
    after = _lens("db", "status", "--check", env=env)
    assert after.returncode == 0
    assert "0001_initial" in after.stdout
    assert "schema is up to date" in after.stdout


def test_db_commands_report_an_unreachable_database_in_one_line() -> None:
    env = {"LENS_DATABASE__URL": "postgresql://lens:hunter2@127.0.0.1:1/lens"}
    result = _lens("db", "migrate", env=env)
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith("lens:")]
    assert lines and lines[0].startswith("lens: database error: cannot connect to the database")
    assert "hunter2" not in result.stderr


def test_docs_metrics_matches_the_committed_file() -> None:
    result = _lens("docs", "metrics")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (REPO / "docs" / "metrics.md").read_text(), (
        "regenerate: lens docs metrics > docs/metrics.md"
    )


@contextlib.contextmanager
def _sim_kube(kubeconfig: Path, *extra: str) -> Iterator[subprocess.Popen[str]]:
    """`lens sim kube` on a free port, stopped with SIGTERM (and checked to exit 0)."""
    command = [
        sys.executable,
        "-m",
        "lens",
        "sim",
        "kube",
        "--port",
        "0",
        "--kubeconfig",
        str(kubeconfig),
        *extra,
    ]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        yield process
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0


def _with_client(kubeconfig: Path, body: str) -> str:
    """Run `body` in a fresh interpreter with the official client configured from `kubeconfig`."""
    setup = f"kubernetes.config.load_kube_config(config_file={str(kubeconfig)!r})"
    probe = f"import kubernetes\n{setup}\n{body}"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_sim_kube_serves_the_official_client_until_terminated(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    with _sim_kube(kubeconfig) as process:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("simulated Kubernetes API at http://127.0.0.1:")
        assert process.stdout.readline().strip() == f"kubeconfig: {kubeconfig}"
        listed = _with_client(
            kubeconfig,
            "names = kubernetes.client.CoreV1Api().list_namespace().items\n"
            "print(sorted(n.metadata.name for n in names))",
        )
        assert "'default'" in listed


def test_sim_node_builds_a_host_tree(tmp_path: Path) -> None:
    result = _lens(
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
    result = _lens("sim", "node", str(tmp_path), *args)
    assert result.returncode == 2
    assert message in result.stderr


def test_sim_kube_replays_a_scenario(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    with _sim_kube(kubeconfig, "--scenario", "small", "--speed", "60") as process:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "scenario small: 2 nodes, 16 GPUs"
        assert process.stdout.readline().startswith("simulated Kubernetes API at")
        process.stdout.readline()
        body = (
            "pods = kubernetes.client.CoreV1Api().list_pod_for_all_namespaces().items\n"
            "print(sum(p.status.phase == 'Running' for p in pods))"
        )
        assert int(_with_client(kubeconfig, body).strip()) >= 7


def test_sim_kube_refuses_an_unknown_scenario() -> None:
    result = _lens("sim", "kube", "--port", "0", "--scenario", "huge")
    assert result.returncode == 2
    assert "unknown scenario 'huge'" in result.stderr


@pytest.mark.slow_timeout
def test_node_agent_serves_a_simulated_node_until_terminated(
    tmp_path: Path, free_port: Callable[[], int]
) -> None:
    import time
    import urllib.request

    tree = tmp_path / "node"
    assert _lens("sim", "node", str(tree), "--gpus", "2", "--rdma", "1").returncode == 0
    port = free_port()
    command = [sys.executable, "-m", "lens", "node-agent", "--host-root", str(tree)]
    env = {**os.environ, "LENS_SERVER__HOST": "127.0.0.1", "LENS_LOGGING__FORMAT": "json"}
    with subprocess.Popen(
        [*command, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as process:
        deadline, body = time.monotonic() + 30, ""
        while time.monotonic() < deadline and "lens_gpu_info" not in body:
            time.sleep(0.2)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    body = r.read().decode()
            except OSError:
                continue
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
        _out, err = process.communicate()
    assert body.count("lens_gpu_info{") == 2 and "rdma_stat_rx_write_requests{" in body
    started = [json.loads(line) for line in err.splitlines() if '"node agent starting"' in line]
    assert started and started[0]["vendors"] == ["amd"]


def test_node_agent_refuses_an_unknown_collector(tmp_path: Path) -> None:
    result = _lens(
        "node-agent", "--host-root", str(tmp_path), env={"LENS_NODE_AGENT__COLLECTORS": "gpu"}
    )
    assert result.returncode == 2
    assert result.stderr.startswith("lens: config error: config: node_agent.collectors:")


@pytest.mark.slow_timeout
def test_gpus_and_rdma_diagnostics_on_a_simulated_node(tmp_path: Path) -> None:
    tree = tmp_path / "node"
    assert _lens("sim", "node", str(tree), "--gpus", "2", "--rdma", "2").returncode == 0
    table = _lens("gpus", "--host-root", str(tree))
    assert table.returncode == 0, table.stderr
    assert "2 GPUs" in table.stdout and "AMD Instinct MI300X" in table.stdout
    document = json.loads(_lens("gpus", "--host-root", str(tree), "--json").stdout)
    assert len(document["gpus"]) == 2 and document["static_facts_source"] == "amd-smi"
    ports = json.loads(_lens("rdma", "--host-root", str(tree), "--json").stdout)
    assert [d["name"] for d in ports["devices"]] == ["mlx5_0", "mlx5_1"]


def test_gpus_on_a_node_without_gpus_exits_1(tmp_path: Path) -> None:
    result = _lens("gpus", "--host-root", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.strip() == f"lens: nothing found: no GPUs under {tmp_path}"


def test_controller_release_finalizers_on_a_simulated_cluster(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    with _sim_kube(kubeconfig) as process:
        assert process.stdout is not None
        process.stdout.readline()
        process.stdout.readline()
        _with_client(
            kubeconfig,
            "body = {'metadata': {'name': 'held', 'finalizers': ['lens.dev/gpu-workload']}}\n"
            "kubernetes.client.CoreV1Api().create_namespaced_config_map('default', body)",
        )
        env = {"LENS_KUBE__SOURCE": "kubeconfig", "LENS_KUBE__KUBECONFIG": str(kubeconfig)}
        result = _lens("controller", "release-finalizers", env=env)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == [
            "released ConfigMap default/held",
            "1 finalizer(s) released",
        ]


def test_controller_without_a_usable_kubeconfig_is_a_config_error(tmp_path: Path) -> None:
    env = {"LENS_KUBE__SOURCE": "kubeconfig", "LENS_KUBE__KUBECONFIG": str(tmp_path / "none")}
    for args in (("controller",), ("controller", "release-finalizers")):
        result = _lens(*args, env={**env, "LENS_SERVICE__DATA_DIR": str(tmp_path)})
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith("lens: config error: config: kube.kubeconfig:")
