"""`lens node-agent`'s requests to its kubelet, recorded: a plain-HTTP kubelet front that answers
from the simulated kubelet (lens/sim/kubelet) and notes each request, and the attributes the
kubelet authorizes them as (kubernetes.io/docs/reference/access-authn-authz/kubelet-authn-authz:
/stats/* is nodes/stats, /pods nodes/pods with KubeletFineGrainedAuthz and nodes/proxy
before it, anything else nodes/proxy)."""

from __future__ import annotations

import collections
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from lens.roles.node_agent import main as agent_main
from lens.runtime.clock import FakeClock
from lens.runtime.config import (
    Config,
    ContainersConfig,
    HostConfig,
    KubeletConfig,
    NodeAgentConfig,
    ServiceConfig,
)
from lens.runtime.process import Process
from lens.sim.hosts.tree import HostTree
from lens.sim.kube.recording import HTTP_VERBS, ApiRequest
from lens.sim.kube.server import KubeApiServer
from lens.sim.kubelet.server import KubeletServer, inventory_from_tree
from tests.deploy.roleruns import LOOPBACK

NODE = "gpu-node-1"
TOKEN = "node-agent-token"
# The kubelet's paths and the subresources of nodes it authorizes them as, the fine-grained
# one first (KubeletFineGrainedAuthz: beta and on from Kubernetes 1.33), nodes/proxy after it.
_SUBRESOURCES = (
    ("/stats", ("stats",)),
    ("/metrics", ("metrics",)),
    ("/logs", ("log",)),
    ("/spec", ("spec",)),
    ("/checkpoint", ("checkpoint",)),
    ("/pods", ("pods", "proxy")),
    ("/runningpods", ("pods", "proxy")),
    ("/healthz", ("healthz", "proxy")),
    ("/configz", ("configz", "proxy")),
)


def _is_subpath(path: str, of: str) -> bool:
    return path == of or path.startswith(of + "/")


def kubelet_attributes(method: str, path: str, node: str) -> list[ApiRequest]:
    """The attributes a kubelet may authorize `method path` as: the first allowed lets it
    through (a kubelet without fine-grained authorization asks for the last one only)."""
    subresources = next((s for p, s in _SUBRESOURCES if _is_subpath(path, p)), ("proxy",))
    return [
        ApiRequest(
            verb=HTTP_VERBS.get(method, ""),
            api_version="v1",
            resource="nodes",
            subresource=subresource,
            name=node,
        )
        for subresource in subresources
    ]


class RecordingKubelet:
    """GET /pods and /stats/summary over plain HTTP, each request noted as (method, path)."""

    def __init__(self, kubelet: KubeletServer) -> None:
        self.requests: collections.Counter[tuple[str, str]] = collections.Counter()
        self._lock = threading.Lock()
        front = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                with front._lock:
                    front.requests[("GET", path)] += 1
                routes = {"/pods": kubelet.pod_list, "/stats/summary": kubelet.stats_summary}
                route = routes.get(path)
                known = self.headers.get("Authorization") == f"Bearer {TOKEN}"
                code, body = (200, json.dumps(route()).encode()) if route and known else (403, b"")
                self.send_response(code)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                """Quiet."""

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def __enter__(self) -> RecordingKubelet:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()


@contextmanager
def _kubelet(tree: HostTree, directory: Path) -> Iterator[tuple[KubeApiServer, RecordingKubelet]]:
    with KubeApiServer() as kube:
        kubelet = KubeletServer(
            kube.store,
            NODE,
            directory=directory / "kubelet",
            token=TOKEN,
            inventory=inventory_from_tree(tree.node.gpus, "amd.com/gpu"),
        ).start(pod_resources=False)
        try:
            with RecordingKubelet(kubelet) as front:
                yield kube, front
        finally:
            kubelet.stop()


def _pod() -> dict[str, object]:
    limits = {"limits": {"amd.com/gpu": "2"}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train-0", "namespace": "default"},
        "spec": {"nodeName": NODE, "containers": [{"name": "main", "resources": limits}]},
        "status": {"phase": "Running"},
    }


def run(tree: HostTree, directory: Path) -> tuple[collections.Counter[tuple[str, str]], str]:
    """One cycle of the agent; its kubelet requests and its /metrics text."""
    token = directory / "token"
    token.write_text(TOKEN)
    with _kubelet(tree, directory) as (kube, front):
        kube.create(_pod())
        config = Config(
            host=HostConfig(root=str(tree.root)),
            server=LOOPBACK,
            service=ServiceConfig(loop_jitter_ratio=0),
            kubelet=KubeletConfig(url=front.url, token_file=str(token)),
            node_agent=NodeAgentConfig(node_name=NODE),
            containers=ContainersConfig(containerd_address=""),
        )
        process = Process(
            "node-agent",
            server=config.server,
            service=config.service,
            clock=FakeClock(),
            handle_signals=False,
        )
        agent = agent_main.build(config, process)
        try:
            agent.cycle.run()
            text = agent.cycle.render_text()
        finally:
            agent.cycle.close()
        assert not kube.recorded(), "the node agent asked the API server"
        return front.requests, text
