"""`lens netflow` as the DaemonSet runs it, in a process of its own: ready once the eBPF program
is loaded, traffic of known size between two network namespaces counted to the byte in its
metrics with the right direction, peer, peer type and server port, the RTT within 10 % of the
link's, the original's families beside them, /v1/net-flow/tcp-listen in the original's
envelope, and a clean stop."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from tests.netflow.conftest import Link
from tests.opsport import get

pytestmark = pytest.mark.slow_timeout

SENT = 2_000_000
REPLY = 300_000
PORT = 7600


def _within(seconds: float, predicate: Callable[[], bool]) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.1)


def _sample(text: str, name: str, labels: dict[str, str]) -> float | None:
    wanted = ",".join(f'{key}="{value}"' for key, value in labels.items())
    for line in text.splitlines():
        if line.startswith(name + "{") and line.split("}")[0][len(name) + 1 :] == wanted:
            return float(line.rsplit(" ", 1)[1])
    return None


# The kernel's BTF hidden from the process: a tmpfs over /sys/kernel/btf in a mount namespace
# of its own, which is what bcc (and libbpf) see on a kernel built without it.
WITHOUT_BTF = ["unshare", "--mount", "sh", "-c", 'mount -t tmpfs none /sys/kernel/btf && exec "$@"']


@pytest.fixture
def netflow(
    request: pytest.FixtureRequest, tmp_path: Path, free_port: Callable[[], int], link: Link
) -> Iterator[int]:
    """`lens netflow` on a free port; parametrized "without BTF", on a kernel offering none."""
    port = free_port()
    settings = {
        "server": {"host": "127.0.0.1", "port": port},
        "service": {"metrics_interval_seconds": 0.5, "readiness_interval_seconds": 0.5},
        "logging": {"format": "json"},
        "netflow": {"interval_seconds": 0.5, "pod_cidrs": [f"{link.server_ip}/32"]},
    }
    config = tmp_path / "lens.yaml"
    config.write_text(yaml.safe_dump(settings))
    command = [sys.executable, "-m", "lens", "netflow", "--config", str(config)]
    if getattr(request, "param", "") == "without BTF":
        command = [*WITHOUT_BTF, "sh", *command]
    process = subprocess.Popen(command)
    try:
        _within(60, lambda: get(port, "/readyz")[0] == 200)
        seen_btf = Path(f"/proc/{process.pid}/root/sys/kernel/btf/vmlinux").exists()
        assert seen_btf == (command[0] != "unshare")
        yield port
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0


@pytest.mark.parametrize("netflow", ["with BTF", "without BTF"], indirect=True)
def test_the_traffic_is_counted_by_direction_peer_and_port(
    netflow: int, link: Link, request: pytest.FixtureRequest
) -> None:
    """With BTF on raw tracepoints, without it on the ordinary ones: the same numbers."""
    assert link.transfer(to=link.server_ip, port=PORT, send=SENT, reply=REPLY) == (SENT, REPLY)
    client_side = {
        "direction": "outbound",
        "peer": link.server_ip,
        "peer_type": "k8sPod",
        "port": str(PORT),
    }
    server_side = {
        "direction": "inbound",
        "peer": link.client_ip,
        "peer_type": "internalHosts",
        "port": str(PORT),
    }
    expected = {
        ("lens_netflow_tcp_sent_bytes_total", "client"): SENT,
        ("lens_netflow_tcp_received_bytes_total", "client"): REPLY,
        ("lens_netflow_tcp_received_bytes_total", "server"): SENT,
        ("lens_netflow_tcp_sent_bytes_total", "server"): REPLY,
    }

    def counted() -> bool:
        text = get(netflow, "/metrics")[1]
        sides = {"client": client_side, "server": server_side}
        return all(
            _sample(text, name, sides[side]) == value for (name, side), value in expected.items()
        )

    _within(10, counted)
    text = get(netflow, "/metrics")[1]
    kinds = {"direction": "outbound", "peer_type": "k8sPod"}
    assert _sample(text, "lens_netflow_tcp_connections_opened_total", kinds) == 1
    rtt_sum = _sample(text, "lens_netflow_tcp_rtt_seconds_sum", kinds)
    rtt_count = _sample(text, "lens_netflow_tcp_rtt_seconds_count", kinds)
    assert rtt_sum is not None and rtt_count
    assert abs(rtt_sum / rtt_count - link.rtt_ms / 1000) <= link.rtt_ms / 1000 / 10
    assert _sample(text, "primus_lens_network_k8s_tcp_flow_total", {"type": "k8sPod"}) == REPLY
    btf = request.node.callspec.params["netflow"] == "with BTF"
    attachment = "raw_tracepoint" if btf else "tracepoint"
    assert f'lens_netflow_backend{{backend="ebpf",attachment="{attachment}"}} 1.0' in text
    status, body = get(netflow, "/v1/net-flow/tcp-listen")
    assert status == 200
    answer = json.loads(body)
    assert answer["meta"] == {"code": 2000, "message": "OK"} and netflow in answer["data"]
    assert not re.search(r"lens_netflow_kernel_dropped_total\{[^}]*\} [1-9]", text)
