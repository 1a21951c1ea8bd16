"""KubeletServer: one simulated node's kubelet, answering from the API emulator's pods.

Serves `/pods` (the pods bound to the node, as the API server holds them), `/stats/summary`
and `/healthz` over HTTPS with a bearer token, and the pod-resources gRPC API on a unix socket.
Devices come from the node's host tree when one is given, so /pods, pod-resources and sysfs
agree on which GPU is which.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc

from lens.runtime.clock import Clock, SystemClock
from lens.sim.kube.selectors import LabelSelector, parse_field_selector
from lens.sim.kube.store import Store
from lens.sim.kubelet import certs, podresources, summary
from lens.sim.kubelet.devices import Device, DeviceAllocator

JsonObject = dict[str, Any]

TERMINAL_PHASES = {"Succeeded", "Failed"}


def inventory_from_tree(gpus: Sequence[Any], resource: str) -> dict[str, list[Device]]:
    """Device ids as the vendor's device plugin names them: PCI address (AMD) or UUID (NVIDIA)."""
    devices = [Device(g.bdf if resource == "amd.com/gpu" else g.uuid, g.numa_node) for g in gpus]
    return {resource: devices} if devices else {}


class KubeletServer:
    """HTTPS on 127.0.0.1 plus a pod-resources socket, for the node `node_name`."""

    def __init__(
        self,
        store: Store,
        node_name: str,
        *,
        directory: Path,
        token: str = "sim-kubelet-token",
        inventory: dict[str, list[Device]] | None = None,
        clock: Clock | None = None,
        port: int = 0,
    ) -> None:
        self.node_name = node_name
        self._store = store
        self._clock = clock or SystemClock()
        self._boot = self._clock.time()
        self._token = token
        self._lock = threading.Lock()
        self.allocator = DeviceAllocator(inventory or {})
        self.cert = certs.issue(directory / "pki")
        self.socket_path = directory / "pod-resources" / "kubelet.sock"
        self._http = _QuietServer(("127.0.0.1", port), _handler(self))
        self._http.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert.cert_file, self.cert.key_file)
        # The handshake happens in the connection's own thread, not in the accept loop.
        self._http.socket = context.wrap_socket(
            self._http.socket, server_side=True, do_handshake_on_connect=False
        )
        self._grpc: grpc.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self._http.server_address[1]}"

    def set_token(self, token: str) -> None:
        """Rotate the accepted bearer token (the old one is refused from now on)."""
        with self._lock:
            self._token = token

    def authorized(self, header: str | None) -> bool:
        with self._lock:
            return header == f"Bearer {self._token}"

    def start(self, *, pod_resources: bool = True) -> KubeletServer:
        """Serve HTTPS, and the pod-resources socket unless told not to (a benchmark running a
        kubelet per node of a large cluster needs only /pods)."""
        if self._thread is not None:
            return self  # already serving
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )
        self._thread.start()
        if pod_resources:
            self._grpc = podresources.serve(self.socket_path, self.pods, self.allocator)
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()
        if self._grpc is not None:
            self._grpc.stop(grace=0).wait(5)

    def __enter__(self) -> KubeletServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def pods(self) -> list[JsonObject]:
        """The pods bound to this node that still run or wait; finished ones give back devices."""
        pods_type = self._store.registry.find("", "v1", "pods")
        assert pods_type is not None
        fields = parse_field_selector(f"spec.nodeName={self.node_name}", "Pod")
        found, _ = self._store.select(pods_type, None, LabelSelector(), fields)
        live = [p for p in found if (p.get("status") or {}).get("phase") not in TERMINAL_PHASES]
        finished = self.allocator.known() - {p["metadata"]["uid"] for p in live}
        self.allocator.release(finished)
        return live

    def pod_list(self) -> JsonObject:
        pods_type = self._store.registry.find("", "v1", "pods")
        assert pods_type is not None
        fields = parse_field_selector(f"spec.nodeName={self.node_name}", "Pod")
        found, _ = self._store.select(pods_type, None, LabelSelector(), fields)
        return {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": found}

    def stats_summary(self) -> JsonObject:
        return summary.summary(self.node_name, self.pods(), self._clock.time(), boot=self._boot)


class _QuietServer(ThreadingHTTPServer):
    """Clients that refuse the certificate (tests do) are not worth a traceback on stderr."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        return


def _handler(kubelet: KubeletServer) -> type[BaseHTTPRequestHandler]:
    return type("KubeletHandler", (_Handler,), {"kubelet": kubelet})


class _Handler(BaseHTTPRequestHandler):
    kubelet: KubeletServer
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/healthz":
            self._send(200, b"ok", "text/plain")
            return
        if not self.kubelet.authorized(self.headers.get("Authorization")):
            self._send(401, b"Unauthorized", "text/plain")
            return
        routes = {"/pods": self.kubelet.pod_list, "/stats/summary": self.kubelet.stats_summary}
        route = routes.get(path)
        if route is None:
            self._send(404, b"404 page not found", "text/plain")
            return
        self._send(200, json.dumps(route()).encode(), "application/json")

    def _send(self, code: int, body: bytes, content_type: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the simulator's requests are not worth a log line each."""
