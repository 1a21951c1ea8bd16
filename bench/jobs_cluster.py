"""The jobs benchmark's cluster, in its own process: the API emulator loaded with a scenario
preset (argument; default large: 1,000 nodes of 8 GPUs, 5,000 GPU pods) an hour into its
timeline, and a simulated kubelet per node serving /pods over HTTPS with a bearer token, for
the original's pattern.

Prints one JSON line: {"url", "kubelets": {node: url}, "token"}; then answers commands read
from stdin, one JSON line each:
- `{"requests": true}`: the API requests served so far by method (WATCH apart).
- `{"finish": N}`: N running GPU pods finish (Succeeded), so a cycle has something to change.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from lens.runtime.clock import FakeClock
from lens.sim.kube.selectors import parse_field_selector, parse_label_selector
from lens.sim.kube.server import KubeApiServer
from lens.sim.kubelet.server import KubeletServer
from lens.sim.scenario import manifests, spec
from lens.sim.scenario.player import ScenarioPlayer

TOKEN = "bench-kubelet-token"


def _running_gpu_pods(kube: KubeApiServer) -> list[tuple[str, str]]:
    pods = kube.resource("v1", "Pod")
    items, _ = kube.store.select(
        pods, None, parse_label_selector(None), parse_field_selector(None, "Pod")
    )
    return [
        (p["metadata"]["namespace"], p["metadata"]["name"])
        for p in items
        if (p.get("status") or {}).get("phase") == "Running"
    ]


def _finish(kube: KubeApiServer, count: int) -> dict[str, int]:
    pods = kube.resource("v1", "Pod")
    done = 0
    for namespace, name in _running_gpu_pods(kube)[:count]:
        current = kube.store.get(pods, namespace, name)
        finished = manifests.finished_status(
            current["status"], failed=False, finished=time.strftime("%Y-%m-%dT%H:%M:%SZ")
        )
        kube.store.put_status(pods, namespace, name, finished)
        done += 1
    return {"finished": done}


def _requests(kube: KubeApiServer) -> dict[str, int]:
    by_method: Counter[str] = Counter()
    for (method, _path), count in kube.requests().items():
        by_method[method] += count
    return dict(by_method)


def main() -> None:
    clock = FakeClock(start_time=time.time() - 3600)
    kube = KubeApiServer(clock=clock, bookmark_interval=5.0, history_size=200_000).start()
    preset = sys.argv[1] if len(sys.argv) > 1 else "large"
    player = ScenarioPlayer(spec.preset(preset), kube, clock=clock).load()
    player.run_until(3600)
    kubelets: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as directory:
        for name in sorted(player.cluster.node_addresses):
            kubelet = KubeletServer(kube.store, name, directory=Path(directory) / name, token=TOKEN)
            kubelets[name] = kubelet.start(pod_resources=False).url
        print(json.dumps({"url": kube.url, "kubelets": kubelets, "token": TOKEN}), flush=True)
        for line in sys.stdin:
            command = json.loads(line)
            answer: dict[str, Any]
            if "finish" in command:
                answer = _finish(kube, int(command["finish"]))
            else:
                answer = _requests(kube)
            print(json.dumps(answer), flush=True)
    kube.stop()


if __name__ == "__main__":
    main()
