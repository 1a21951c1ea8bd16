"""The parts of a remote-write chain for tests of `lens jobs`' intake: Lens's node agents on
simulated nodes, a real Prometheus (Debian's /usr/bin/prometheus) scraping them and
remote-writing to `lens jobs`, and what reaches the remote-write target behind it, per series,
with when it arrived and which workload labels it carried.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from pathlib import Path

from lens.proto._generated.prometheus import remote_pb2
from lens.runtime.clock import FakeClock
from lens.runtime.config import (
    Config,
    ContainersConfig,
    HostConfig,
    NodeAgentConfig,
    ServerConfig,
    ServiceConfig,
)
from lens.sim.hosts.tree import HostTree
from tests.agentprocess import AgentProcess
from tests.prometheusserver import PrivatePrometheus
from tests.telemetry.remotewrite.target import Target

# The labels the enrichment adds (docs/telemetry.md), the team label under its default name.
WORKLOAD_LABELS = frozenset(
    ("pod", "namespace", "pod_uid", "workload_kind", "workload_name", "workload_uid", "team")
)
Labels = tuple[tuple[str, str], ...]  # sorted by name
GpuKey = tuple[str, str]  # (node, GPU index)


class RunningAgent(AgentProcess):
    """Lens's node agent on a simulated node, reading its GPUs, serving /metrics on a free port.
    Its node name is the tree's."""

    def __init__(self, tree: HostTree, clock: FakeClock) -> None:
        config = Config(
            host=HostConfig(root=str(tree.root)),
            server=ServerConfig(host="127.0.0.1", port=0),
            service=ServiceConfig(loop_jitter_ratio=0),
            node_agent=NodeAgentConfig(node_name=tree.spec.name, collectors=("amdgpu",)),
            containers=ContainersConfig(containerd_address=""),
        )
        self.node = tree.spec.name
        super().__init__(config, name="node-agent", clock=clock)


def forwarding_prometheus(
    directory: Path, *, port: int, agents: list[RunningAgent], write_url: str
) -> PrivatePrometheus:
    """/usr/bin/prometheus scraping node agents every second and remote-writing everything it
    scrapes to `write_url` (remote write 1.0 in Prometheus 2.42) within half a second."""
    return PrivatePrometheus(directory, port=port, config=_config(agents, write_url))


def _config(agents: list[RunningAgent], write_url: str) -> dict[str, object]:
    # Each target carries its node's name as `node`, as a kubernetes_sd_configs pod role's
    # relabelling of __meta_kubernetes_pod_node_name does for a DaemonSet's pods (kube-prometheus
    # does so): the agent's GPU series name their GPU, not their node.
    targets = [{"targets": [agent.address], "labels": {"node": agent.node}} for agent in agents]
    return {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
        "scrape_configs": [{"job_name": "lens-node-agent", "static_configs": targets}],
        "remote_write": [
            {
                "url": write_url,
                "queue_config": {
                    "batch_send_deadline": "500ms",
                    "min_backoff": "100ms",
                    "max_backoff": "1s",
                },
            }
        ],
    }


@dataclasses.dataclass(frozen=True, slots=True)
class Arrival:
    """One series in one request the target received."""

    at: float  # wall time (time.time()) the request was taken from the target
    added: Labels  # the workload labels it carried; () none


class Arrivals:
    """Takes every request the target receives as it comes (a thread), and keeps each series'
    arrivals under its own labels (those but the workload labels)."""

    def __init__(self, target: Target) -> None:
        self._target = target
        self._lock = threading.Lock()
        self._seen: dict[Labels, list[Arrival]] = {}
        self.versions: set[str] = set()  # X-Prometheus-Remote-Write-Version of the requests
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                headers, raw = self._target.received.get(timeout=0.05)
            except queue.Empty:
                continue
            at = time.time()
            request = remote_pb2.WriteRequest.FromString(raw)
            with self._lock:
                self.versions.add(headers.get("X-Prometheus-Remote-Write-Version", ""))
                for series in request.timeseries:
                    labels = [(label.name, label.value) for label in series.labels]
                    own = tuple(sorted(p for p in labels if p[0] not in WORKLOAD_LABELS))
                    added = tuple(sorted(p for p in labels if p[0] in WORKLOAD_LABELS))
                    self._seen.setdefault(own, []).append(Arrival(at=at, added=added))

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(5)

    def series(self) -> dict[Labels, list[Arrival]]:
        """Every series seen, by its own labels, with its arrivals in order."""
        with self._lock:
            return {own: list(seen) for own, seen in self._seen.items()}

    def by_gpu(self) -> dict[GpuKey, set[Labels]]:
        """For each GPU with series (by `node` and the agent's `gpu`, or the original's
        `gpu_id`), the workload labels the latest arrival of each of its series carried."""
        found: dict[GpuKey, set[Labels]] = {}
        for own, seen in self.series().items():
            key = gpu_of(own)
            if key is not None:
                found.setdefault(key, set()).add(seen[-1].added)
        return found

    def history(self, key: GpuKey) -> list[Arrival]:
        """The arrivals of all the GPU's series, in order."""
        merged = [a for own, seen in self.series().items() if gpu_of(own) == key for a in seen]
        return sorted(merged, key=lambda arrival: arrival.at)


def gpu_of(own: Labels) -> GpuKey | None:
    labels = dict(own)
    gpu = labels.get("gpu", labels.get("gpu_id"))
    node = labels.get("node")
    return None if gpu is None or node is None else (node, gpu)
