"""What netflow.peer_pods holds per pod on every node: the watch's cache of pods cut by
naming_fields plus the index by address, against the baseline in the same run — the same pods
cached whole (as the controller's watch keeps them, managedFields aside).

The pods are shaped as a Deployment's GPU pods are on a real cluster: labels, annotations, an
owner, one container with ten environment variables and a GPU limit, four conditions; each is
parsed from its own JSON text, as watch events are. Memory is what tracemalloc sees allocated
for the cache (and the index) and still held, divided by the pods.
"""

from __future__ import annotations

import argparse
import json
import tracemalloc
from typing import Any

from lens.kube.machinery.cache import ObjectCache
from lens.kube.machinery.reflector import Keep, as_cached
from lens.netflow.peerpods import PeerPodIndex, naming_fields


def pod_text(i: int) -> str:
    address = f"10.{i // 65536}.{i // 256 % 256}.{i % 256}"
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"train-6b7c9d8f-{i:06d}",
            "namespace": f"team-{i % 20}",
            "uid": f"{i:08x}-1111-2222-3333-444455556666",
            "resourceVersion": str(1_000_000 + i),
            "labels": {"app": "train", "pod-template-hash": "6b7c9d8f", "team": f"t{i % 20}"},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "train-6b7c9d8f",
                    "uid": "abcd-ef01",
                    "controller": True,
                    "blockOwnerDeletion": True,
                },
            ],
        },
        "spec": {
            "nodeName": f"gpu-{i % 1000}",
            "containers": [
                {
                    "name": "train",
                    "image": "registry.example.com/ml/train:2.4.1",
                    "env": [{"name": f"SETTING_{k}", "value": f"value-{k}-{i}"} for k in range(10)],
                    "resources": {"limits": {"amd.com/gpu": "8", "memory": "512Gi"}},
                }
            ],
        },
        "status": {
            "phase": "Running",
            "podIP": address,
            "podIPs": [{"ip": address}],
            "conditions": [
                {"type": kind, "status": "True", "lastTransitionTime": "2026-11-01T00:00:00Z"}
                for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
            ],
        },
    }
    return json.dumps(pod)


def _held_per_pod(texts: list[str], keep: Keep | None, *, index: bool) -> float:
    tracemalloc.start()
    cache = ObjectCache()
    names = PeerPodIndex()
    kept = []
    for text in texts:
        obj = as_cached(json.loads(text), keep)
        kept.append(obj)
        if index:
            names.put(obj)
    cache.replace(kept)
    del kept
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(cache.objects()) == len(texts) and len(names) == (len(texts) if index else 0)
    return held / len(texts)


def run(argv: list[str]) -> dict[str, object]:
    parser = argparse.ArgumentParser(prog="python -m bench netflow_peer_pods")
    parser.add_argument("--pods", type=int, default=20_000)
    args = parser.parse_args(argv)
    texts = [pod_text(i) for i in range(args.pods)]
    whole = _held_per_pod(texts, None, index=False)
    cut = _held_per_pod(texts, naming_fields, index=True)
    return {
        "pods": args.pods,
        "pod_json_bytes": round(sum(map(len, texts)) / len(texts)),
        "baseline_whole_bytes_per_pod": round(whole),
        "peer_pods_bytes_per_pod": round(cut),
        "ratio": round(whole / cut, 2),
        "mib_per_100k_pods": round(cut * 100_000 / 2**20),
    }
