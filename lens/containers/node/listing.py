"""Live containers as JSON for the agent's /v1/pods and `lens containers --json`.

Keeps the original's field names (REFERENCE.md 2.2: pod_name, pod_namespace, pod_uuid, devices
{gpu, infiniband}) for the containers the tracker reports.
"""

from __future__ import annotations

from collections.abc import Iterable

from lens.containers.model import Container, Device

JsonObject = dict[str, object]


def device_json(device: Device) -> JsonObject:
    return {
        "name": device.name,
        "id": device.number,
        "path": device.path,
        "kind": "GPU" if device.type == "gpu" else "rdma",
        "uuid": device.uuid,
    }


def container_json(container: Container) -> JsonObject:
    pod = container.pod
    return {
        "id": container.id,
        "name": container.name,
        "metadata": {"name": container.name},
        "image": container.image,
        "pod_name": pod.name if pod else "",
        "pod_namespace": pod.namespace if pod else "",
        "pod_uuid": pod.uid if pod else "",
        "status": container.status,
        "created_at": container.created_at,
        "exit_code": container.exit_code,
        "exit_time": container.exited_at,
        "oom_killed": container.status == "OOMKilled",
        "devices": {
            "gpu": [device_json(d) for d in container.devices if d.type == "gpu"],
            "infiniband": [device_json(d) for d in container.devices if d.type == "ib"],
        },
    }


def containers_json(containers: Iterable[Container]) -> list[JsonObject]:
    return [container_json(c) for c in containers]
