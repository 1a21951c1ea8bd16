"""How fast a scenario loads into the Kubernetes API emulator, and replays its timeline.

The player writes straight into the emulator's store; the baseline creates the same medium
cluster through the official client over HTTP, as a test harness without the player would.
Issue 3 asks the large preset (1,000 nodes x 8 GPUs, 5,000 GPU pods) to load in under 60 s.
"""

from __future__ import annotations

import argparse
import resource
import time

import kubernetes

from lens.runtime.clock import FakeClock
from lens.sim.kube.server import KubeApiServer
from lens.sim.scenario import spec
from lens.sim.scenario.player import ScenarioPlayer


def _load(name: str) -> dict[str, float]:
    clock = FakeClock(start_time=1_800_000_000.0)
    kube = KubeApiServer(clock=clock)
    try:
        started = time.perf_counter()
        player = ScenarioPlayer(spec.preset(name), kube, clock=clock).load()
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        events = player.run_until(2 * 3600)
        played = time.perf_counter() - started
        return {
            "load_seconds": round(loaded, 3),
            "objects_written": kube.store.resource_version,
            "writes_per_second": round(kube.store.resource_version / loaded),
            "replay_2h_seconds": round(played, 3),
            "replay_events": events,
        }
    finally:
        kube.stop()


def _load_over_http(name: str) -> float:
    """The baseline: every object of the loaded scenario created again through the client."""
    clock = FakeClock(start_time=1_800_000_000.0)
    source = KubeApiServer(clock=clock)
    ScenarioPlayer(spec.preset(name), source, clock=clock).load()
    target = KubeApiServer(clock=clock).start()
    configuration = kubernetes.client.Configuration()
    configuration.host = target.url
    try:
        with kubernetes.client.ApiClient(configuration) as client:
            dynamic = kubernetes.dynamic.DynamicClient(client)
            order = [
                "CustomResourceDefinition",
                "Namespace",
                "Node",
                "Deployment",
                "StatefulSet",
                "Job",
                "CronJob",
                "ReplicaSet",
                "PyTorchJob",
                "Pod",
            ]
            objects = _snapshot(source)
            started = time.perf_counter()
            for kind in order:
                for obj in objects.get(kind, []):
                    resource_ = dynamic.resources.get(api_version=obj["apiVersion"], kind=kind)
                    body = {k: v for k, v in obj.items() if k != "status"}
                    body["metadata"] = {
                        k: v
                        for k, v in obj["metadata"].items()
                        if k in ("name", "namespace", "labels", "ownerReferences")
                    }
                    if kind == "Namespace" and obj["metadata"]["name"] in (
                        "default",
                        "kube-system",
                        "kube-public",
                        "kube-node-lease",
                    ):
                        continue
                    resource_.create(body=body, namespace=obj["metadata"].get("namespace"))
            return time.perf_counter() - started
    finally:
        source.stop()
        target.stop()


def _snapshot(kube: KubeApiServer) -> dict[str, list[dict[str, object]]]:
    from lens.sim.kube.selectors import FieldSelector, LabelSelector

    found: dict[str, list[dict[str, object]]] = {}
    for rtype in kube.registry.all():
        items, _ = kube.store.select(rtype, None, LabelSelector(), FieldSelector())
        if items:
            found.setdefault(rtype.kind, []).extend(items)
    return found


def run(argv: list[str]) -> dict[str, object]:
    parser = argparse.ArgumentParser(prog="python -m bench scenario")
    parser.add_argument("--presets", default="small,medium,large")
    parser.add_argument("--baseline", default="medium", help="preset to also load over HTTP")
    args = parser.parse_args(argv)
    figures: dict[str, object] = {}
    for name in args.presets.split(","):
        figures[name] = _load(name)
    if args.baseline:
        over_http = _load_over_http(args.baseline)
        direct = (
            figures[args.baseline]["load_seconds"]
            if args.baseline in figures
            else _load(args.baseline)["load_seconds"]
        )  # type: ignore[index]
        figures["baseline"] = {
            "preset": args.baseline,
            "http_client_seconds": round(over_http, 3),
            "player_seconds": direct,
            "ratio": round(over_http / max(direct, 1e-6), 1),
        }
    figures["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return figures
