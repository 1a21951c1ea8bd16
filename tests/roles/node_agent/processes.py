"""`lens jobs` and `lens node-agent` as child processes on a simulated node, killable with
SIGKILL: the end-to-end tests of container events and device reports drive them."""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from pathlib import Path

from lens.sim.containerd import PrivateContainerd
from lens.sim.hosts.tree import HostTree
from tests.roleprocess import Process


def get(port: int, path: str) -> tuple[int, object]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=3)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def answers(port: int, path: str) -> bool:
    try:
        return get(port, path)[0] == 200
    except OSError:
        return False


class Pipeline:
    """`lens jobs` storing to `url` and a `lens node-agent` on `tree` following `ctd`, streaming
    its events to it; `reconcile_seconds`: how often the agent lists containers again."""

    def __init__(
        self,
        *,
        tree: HostTree,
        ctd: PrivateContainerd,
        url: str,
        tmp: Path,
        ports: list[int],
        reconcile_seconds: int = 2,
    ) -> None:
        grpc_port, jobs_http, agent_http = ports
        self.agent_http, self.jobs_http = agent_http, jobs_http
        self.pod_resources_socket = tmp / "pod-resources" / "kubelet.sock"
        self.journal_dir = tmp / "journal"
        common = {"LENS_LOGGING__FORMAT": "json", "LENS_SERVICE__STOP_TIMEOUT_SECONDS": "10"}
        self.jobs = Process(
            "jobs",
            {
                **common,
                "LENS_DATABASE__URL": url,
                "LENS_JOBS__GRPC_HOST": "127.0.0.1",
                "LENS_JOBS__GRPC_PORT": str(grpc_port),
                "LENS_SERVER__PORT": str(jobs_http),
                "LENS_JOBS__WATCH_CLUSTER": "off",
                "LENS_JOBS__DAILY_REPORT_TIME": "",
            },
            tmp / "jobs.log",
        )
        self.agent = Process(
            "node-agent",
            {
                **common,
                "LENS_HOST__ROOT": str(tree.root),
                "LENS_NODE_AGENT__NODE_NAME": "gpu-node-1",
                "LENS_NODE_AGENT__COLLECTORS": "amdgpu,dri,rdma",
                "LENS_CONTAINERS__CONTAINERD_ADDRESS": ctd.socket,
                "LENS_CONTAINERS__RECONCILE_INTERVAL_SECONDS": str(reconcile_seconds),
                "LENS_EVENTS__SERVER_ADDRESS": f"127.0.0.1:{grpc_port}",
                "LENS_EVENTS__JOURNAL_DIR": str(self.journal_dir),
                "LENS_CONTAINERS__POD_RESOURCES_SOCKET": str(self.pod_resources_socket),
                "LENS_SERVER__PORT": str(agent_http),
            },
            tmp / "agent.log",
        )

    def start(self, eventually: Callable[..., None]) -> None:
        """Both processes, until each answers /readyz (the agent: every runtime followed; jobs:
        the database migrated)."""
        self.jobs.start()
        self.agent.start()
        eventually(lambda: answers(self.agent_http, "/readyz"), timeout=30)
        eventually(lambda: answers(self.jobs_http, "/readyz"), timeout=30)
