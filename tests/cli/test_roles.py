from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import run_lens, sim_kube, with_client


@pytest.mark.slow_timeout
def test_node_agent_serves_a_simulated_node_until_terminated(
    tmp_path: Path, free_port: Callable[[], int]
) -> None:
    import time
    import urllib.request

    tree = tmp_path / "node"
    assert run_lens("sim", "node", str(tree), "--gpus", "2", "--rdma", "1").returncode == 0
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
    result = run_lens(
        "node-agent", "--host-root", str(tmp_path), env={"LENS_NODE_AGENT__COLLECTORS": "gpu"}
    )
    assert result.returncode == 2
    assert result.stderr.startswith("lens: config error: config: node_agent.collectors:")


@pytest.mark.slow_timeout  # three processes (the simulator, a client, `lens`): over 5 s in CI
def test_controller_release_finalizers_on_a_simulated_cluster(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    with sim_kube(kubeconfig) as process:
        assert process.stdout is not None
        process.stdout.readline()
        process.stdout.readline()
        with_client(
            kubeconfig,
            "body = {'metadata': {'name': 'held', 'finalizers': ['lens.dev/gpu-workload']}}\n"
            "kubernetes.client.CoreV1Api().create_namespaced_config_map('default', body)",
        )
        env = {"LENS_KUBE__SOURCE": "kubeconfig", "LENS_KUBE__KUBECONFIG": str(kubeconfig)}
        result = run_lens("controller", "release-finalizers", env=env)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == [
            "released ConfigMap default/held",
            "1 finalizer(s) released",
        ]


def test_controller_without_a_usable_kubeconfig_is_a_config_error(tmp_path: Path) -> None:
    env = {"LENS_KUBE__SOURCE": "kubeconfig", "LENS_KUBE__KUBECONFIG": str(tmp_path / "none")}
    for args in (("controller",), ("controller", "release-finalizers")):
        result = run_lens(*args, env={**env, "LENS_SERVICE__DATA_DIR": str(tmp_path)})
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith("lens: config error: config: kube.kubeconfig:")


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("jobs", "--port", "70000"), "--port"),
        (("jobs", "--grpc-port", "-1"), "--grpc-port"),
        (("node-agent", "--port", "65536"), "--port"),
        (("controller", "--port", "99999"), "--port"),
    ],
)
def test_a_port_outside_0_to_65535_is_refused(args: tuple[str, ...], flag: str) -> None:
    # 70000 used to be accepted and listen on 4464 (issue 16, point 12).
    result = run_lens(*args)
    assert result.returncode == 2
    assert f"Invalid value for '{flag}'" in result.stderr
    assert "Traceback" not in result.stderr


def test_node_agent_refuses_a_host_root_that_is_a_file(tmp_path: Path) -> None:
    # The node agent started and read nothing under it (issue 16, point 12).
    afile = tmp_path / "file"
    afile.write_text("")
    result = run_lens("node-agent", "--host-root", str(afile), "--port", "0")
    assert result.returncode == 2
    assert (
        result.stderr == f"lens: config error: --host-root: expected a directory, got '{afile}'\n"
    )


@pytest.mark.slow_timeout
def test_jobs_blames_an_unusable_tls_certificate_on_its_setting(tmp_path: Path) -> None:
    # A certificate that was no PEM was blamed on the event server's address, exit 1 (#12).
    notpem = tmp_path / "cert.pem"
    notpem.write_text("not a certificate\n")
    env = {
        "LENS_SERVICE__DATA_DIR": str(tmp_path),
        "LENS_SERVER__HOST": "127.0.0.1",
        "LENS_JOBS__GRPC_HOST": "127.0.0.1",
        "LENS_JOBS__TLS_CERT_FILE": str(notpem),
        "LENS_JOBS__TLS_KEY_FILE": str(notpem),
    }
    result = run_lens("jobs", "--port", "0", "--grpc-port", "0", env=env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "lens: config error: config: jobs.tls_cert_file: "
        f"a PEM certificate ({notpem} holds none that can be read)"
    )


@pytest.mark.slow_timeout
def test_api_serves_v1_from_its_database_until_terminated(
    tmp_path: Path, free_port: Callable[[], int]
) -> None:
    import time
    import urllib.request

    ops_port, api_port = free_port(), free_port()
    env = {
        **os.environ,
        "LENS_SERVICE__DATA_DIR": str(tmp_path),
        "LENS_SERVER__HOST": "127.0.0.1",
        "LENS_LOGGING__FORMAT": "json",
    }
    command = [sys.executable, "-m", "lens", "api", "--port", str(ops_port)]
    with subprocess.Popen(
        [*command, "--api-port", str(api_port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as process:
        deadline, answers = time.monotonic() + 30, {}
        for url in (
            f"http://127.0.0.1:{api_port}/v1/nodes",
            f"http://127.0.0.1:{ops_port}/readyz",
        ):
            while url not in answers and time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(url, timeout=2) as response:
                        answers[url] = (response.status, response.read().decode())
                except OSError:
                    time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
        _out, err = process.communicate()
    status, body = answers[f"http://127.0.0.1:{api_port}/v1/nodes"]
    assert status == 200
    listed = json.loads(body)["data"]
    assert (listed["data"], listed["total"]) == ([], 0)  # a fresh database: no node
    assert answers[f"http://127.0.0.1:{ops_port}/readyz"][0] == 200
    started = [json.loads(line) for line in err.splitlines() if '"api starting"' in line]
    assert started and started[0]["authenticated"] is False


def test_api_beyond_loopback_without_tokens_is_a_config_error(tmp_path: Path) -> None:
    env = {"LENS_SERVICE__DATA_DIR": str(tmp_path)}
    result = run_lens("api", "--port", "0", "--api-port", "0", "--api-host", "0.0.0.0", env=env)
    assert result.returncode == 2
    assert "api.token_file" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


HTTP = "the HTTP server (/metrics, health checks)"
EVENTS = "the event server (gRPC)"
API = "the REST API and dashboard"


@pytest.mark.slow_timeout
@pytest.mark.parametrize(
    ("args", "env", "purpose", "moved_by"),
    [
        (
            ("node-agent", "--port", "{port}"),
            {},
            HTTP,
            "--port, the server.port setting or LENS_SERVER__PORT",
        ),
        (
            ("netflow", "--port", "{port}"),
            {},
            HTTP,
            "--port, the server.port setting or LENS_SERVER__PORT",
        ),
        (
            ("controller", "--port", "{port}"),
            {},
            HTTP,
            "--port, the server.port setting or LENS_SERVER__PORT",
        ),
        (
            ("jobs", "--port", "0", "--grpc-port", "{port}"),
            {},
            EVENTS,
            "--grpc-port, the jobs.grpc_port setting or LENS_JOBS__GRPC_PORT",
        ),
        (
            ("api", "--port", "0", "--api-port", "{port}"),
            {},
            API,
            "--api-port, the api.port setting or LENS_API__PORT",
        ),
        # `lens up` has no flag for the event server's port: the setting and variable only.
        (
            ("up", "--port", "0", "--api-port", "0"),
            {"LENS_JOBS__GRPC_PORT": "{port}"},
            EVENTS,
            "the jobs.grpc_port setting or LENS_JOBS__GRPC_PORT",
        ),
    ],
)
def test_a_port_in_use_is_one_line_naming_what_moves_it(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], purpose: str, moved_by: str
) -> None:
    # It read "lens: part failed: api: api-server: OSError: [Errno 98] Address already in
    # use" after a JSON traceback line (issue 36).
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = run_lens(
            *(arg.format(port=port) for arg in args),
            env={
                **{name: value.format(port=port) for name, value in env.items()},
                "HOME": str(tmp_path),
                "KUBECONFIG": str(tmp_path / "no-kubeconfig"),
                "LENS_SERVICE__DATA_DIR": str(tmp_path),
                "LENS_HOST__ROOT": str(tmp_path),
                "LENS_SERVER__HOST": "127.0.0.1",
                "LENS_JOBS__GRPC_HOST": "127.0.0.1",
                "LENS_KUBE__SOURCE": "url",
                "LENS_KUBE__URL": "http://127.0.0.1:1",
                "LENS_LOGGING__FORMAT": "json",
            },
        )
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"lens: cannot listen on 127.0.0.1:{port} for {purpose}: the port is in use; "
        f"choose another port with {moved_by}"
    )
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert [line for line in lines if line.startswith("lens:")] == lines[-1:]
    logged = [json.loads(line) for line in lines[:-1] if line.startswith("{")]
    assert not [entry for entry in logged if "exc" in entry], "no traceback in the log either"


@pytest.mark.slow_timeout
def test_an_address_not_of_this_host_names_the_host_setting(tmp_path: Path) -> None:
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never a host's own address.
    result = run_lens(
        "node-agent",
        "--host-root",
        str(tmp_path),
        "--port",
        "0",
        env={"LENS_SERVER__HOST": "192.0.2.1", "LENS_SERVICE__DATA_DIR": str(tmp_path)},
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "lens: cannot listen on 192.0.2.1:0 for the HTTP server (/metrics, health checks): the "
        "address is not one of this host's; choose another address with the server.host "
        "setting or LENS_SERVER__HOST"
    )
    assert "Traceback" not in result.stderr
