"""The kubelet's stats Summary (/stats/summary, stats/v1alpha1) for the pods on one node.

Field names and units from shared/formats/kubelet.md section 1: camelCase, bytes, nano-cores,
RFC 3339 times, the hyphenated "ephemeral-storage" key and snake_case process_stats. Usage
grows with each pod's age, so a reader sees change from one scrape to the next.
"""

from __future__ import annotations

import datetime
import zlib
from typing import Any

JsonObject = dict[str, Any]

NODE_FS_CAPACITY = 3_840_000_000_000
NODE_FS_INODES = 244_000_000


def _time(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(int(epoch), tz=datetime.UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


def _fs(
    used: int, now: float, *, capacity: int = NODE_FS_CAPACITY, inodes_used: int = 100
) -> JsonObject:
    return {
        "time": _time(now),
        "availableBytes": capacity - used,
        "capacityBytes": capacity,
        "usedBytes": used,
        "inodesFree": NODE_FS_INODES - inodes_used,
        "inodes": NODE_FS_INODES,
        "inodesUsed": inodes_used,
    }


def _seed(text: str) -> int:
    return zlib.crc32(text.encode())


def _age(pod: JsonObject, now: float) -> float:
    created = (pod.get("metadata") or {}).get("creationTimestamp")
    if not created:
        return 0.0
    start = datetime.datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
    return max(0.0, now - start.timestamp())


def pod_stats(pod: JsonObject, now: float) -> JsonObject:
    metadata = pod["metadata"]
    seed, age = _seed(metadata["uid"]), _age(pod, now)
    containers, total = [], 0
    for index, container in enumerate((pod.get("spec") or {}).get("containers") or []):
        rootfs = 40_960 + (seed % 97 + index) * 4096 + int(age) * 1024
        logs = 8192 + int(age) * 256
        total += rootfs + logs
        containers.append(
            {
                "name": container["name"],
                "startTime": metadata.get("creationTimestamp", _time(now)),
                "cpu": {
                    "time": _time(now),
                    "usageNanoCores": 1_000_000_000 + seed % 10**9,
                    "usageCoreNanoSeconds": int(age * 1e9),
                },
                "memory": {
                    "time": _time(now),
                    "usageBytes": 2**30 + seed % 2**28,
                    "workingSetBytes": 2**30,
                },
                "rootfs": _fs(rootfs, now, inodes_used=21),
                "logs": _fs(logs, now, inodes_used=3),
            }
        )
    scratch = (seed % 10) * 2**20 + int(age) * 4096
    total += scratch
    return {
        "podRef": {
            "name": metadata["name"],
            "namespace": metadata["namespace"],
            "uid": metadata["uid"],
        },
        "startTime": metadata.get("creationTimestamp", _time(now)),
        "containers": containers,
        "network": {
            "time": _time(now),
            "name": "eth0",
            "rxBytes": int(age) * 10_000,
            "rxErrors": 0,
            "txBytes": int(age) * 5_000,
            "txErrors": 0,
        },
        "volume": [{**_fs(scratch, now, inodes_used=10), "name": "scratch"}],
        "ephemeral-storage": _fs(total, now, inodes_used=144),
        "process_stats": {"process_count": 1 + len(containers) * 4},
    }


def summary(node_name: str, pods: list[JsonObject], now: float, *, boot: float) -> JsonObject:
    """The Summary document: node filesystem usage includes the pods' ephemeral storage."""
    stats = [pod_stats(pod, now) for pod in pods]
    pods_used = sum(p["ephemeral-storage"]["usedBytes"] for p in stats)
    node_used = 120_000_000_000 + pods_used
    return {
        "node": {
            "nodeName": node_name,
            "startTime": _time(boot),
            "cpu": {
                "time": _time(now),
                "usageNanoCores": 8_000_000_000 + 1_000_000_000 * len(pods),
                "usageCoreNanoSeconds": int((now - boot) * 8e9),
            },
            "memory": {
                "time": _time(now),
                "availableBytes": 1_500_000_000_000,
                "usageBytes": 60_000_000_000,
                "workingSetBytes": 50_000_000_000,
            },
            "fs": _fs(node_used, now),
            "runtime": {"imageFs": _fs(210_000_000_000, now, inodes_used=1_800_000)},
            "rlimit": {"time": _time(now), "maxpid": 4_194_304, "curproc": 2300 + 40 * len(pods)},
        },
        "pods": stats,
    }
