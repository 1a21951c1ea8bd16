"""Kubernetes objects of a simulated cluster, shaped as the real controllers leave them.

Nodes carry the AMD/NVIDIA GPU labels and capacity the device plugins publish; pods carry
ownerReferences up the chain (Deployment -> ReplicaSet -> Pod, CronJob -> Job -> Pod, ...),
GPU limits, and a status as the kubelet reports it (containerID "containerd://<64 hex>").
"""

from __future__ import annotations

import hashlib
from typing import Any

from lens.sim.hosts.models import MODELS

JsonObject = dict[str, Any]

RESOURCE = {"amd": "amd.com/gpu", "nvidia": "nvidia.com/gpu"}
PRODUCT_LABEL = {"amd": "amd.com/gpu.product-name", "nvidia": "nvidia.com/gpu.product"}

PYTORCHJOB_CRD: JsonObject = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "pytorchjobs.kubeflow.org"},
    "spec": {
        "group": "kubeflow.org",
        "scope": "Namespaced",
        "names": {
            "plural": "pytorchjobs",
            "singular": "pytorchjob",
            "kind": "PyTorchJob",
            "listKind": "PyTorchJobList",
        },
        "versions": [
            {"name": "v1", "served": True, "storage": True, "subresources": {"status": {}}}
        ],
    },
}


def owner(obj: JsonObject) -> JsonObject:
    meta = obj["metadata"]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def node(name: str, *, model: str, gpus: int, address: str, ready: bool = True) -> JsonObject:
    gpu_model = MODELS[model]
    resource = RESOURCE[gpu_model.vendor]
    capacity = {
        "cpu": "192",
        "memory": "2113459300Ki",
        "pods": "110",
        "ephemeral-storage": "3750000000Ki",
        resource: str(gpus),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                PRODUCT_LABEL[gpu_model.vendor]: gpu_model.market_name.replace(" ", "_"),
            },
        },
        "spec": {},
        "status": {
            "capacity": capacity,
            "allocatable": capacity,
            "conditions": [ready_condition(ready)],
            "addresses": [
                {"type": "InternalIP", "address": address},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "kubeletVersion": "v1.31.4",
                "kubeProxyVersion": "v1.31.4",
                "containerRuntimeVersion": "containerd://1.7.24",
                "osImage": "Ubuntu 22.04.5 LTS",
                "kernelVersion": "5.15.0-131-generic",
                "operatingSystem": "linux",
                "architecture": "amd64",
                "machineID": hashlib.md5(name.encode()).hexdigest(),
                "systemUUID": hashlib.md5(name.encode()).hexdigest(),
                "bootID": hashlib.md5(address.encode()).hexdigest(),
            },
        },
    }


def ready_condition(ready: bool, *, when: str = "2026-01-01T00:00:00Z") -> JsonObject:
    return {
        "type": "Ready",
        "status": "True" if ready else "Unknown",
        "reason": "KubeletReady" if ready else "NodeStatusUnknown",
        "lastHeartbeatTime": when,
        "lastTransitionTime": when,
    }


def namespace(name: str, *, labels: dict[str, str] | None = None) -> JsonObject:
    metadata: JsonObject = {"name": name}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}


def pod_template(app: str, *, gpus: int, resource: str) -> JsonObject:
    limits = {resource: str(gpus)} if gpus else {}
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "rocm/pytorch:latest",
                    "resources": {
                        "limits": {"cpu": "16", "memory": "64Gi", **limits},
                        "requests": {"cpu": "8", "memory": "32Gi", **limits},
                    },
                }
            ],
            "restartPolicy": "Never",
        },
    }


def controller(
    kind: str,
    api_version: str,
    name: str,
    namespace: str,
    spec: JsonObject,
    *,
    owners: list[JsonObject] | None = None,
    labels: dict[str, str] | None = None,
) -> JsonObject:
    metadata: JsonObject = {"name": name, "namespace": namespace, "labels": labels or {"app": name}}
    if owners:
        metadata["ownerReferences"] = owners
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, "spec": spec}


def pod(
    name: str,
    namespace: str,
    template: JsonObject,
    *,
    owners: list[JsonObject],
    node_name: str | None,
    labels: dict[str, str],
) -> JsonObject:
    metadata: JsonObject = {
        "name": name,
        "namespace": namespace,
        "labels": {**template["metadata"]["labels"], **labels},
    }
    if owners:
        metadata["ownerReferences"] = owners
    spec = dict(template["spec"])
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def container_id(pod_uid: str, container: str, attempt: int = 0) -> str:
    return "containerd://" + hashlib.sha256(f"{pod_uid}/{container}/{attempt}".encode()).hexdigest()


def running_status(pod: JsonObject, *, started: str, host_ip: str, pod_ip: str) -> JsonObject:
    conditions = [
        {"type": t, "status": "True", "lastTransitionTime": started}
        for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
    ]
    return {
        "phase": "Running",
        "conditions": conditions,
        "hostIP": host_ip,
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "startTime": started,
        "qosClass": "Burstable",
        "containerStatuses": [
            {
                "name": c["name"],
                "image": c["image"],
                "imageID": "docker.io/rocm/pytorch@sha256:" + "0" * 64,
                "containerID": container_id(pod["metadata"]["uid"], c["name"]),
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": started}},
            }
            for c in pod["spec"]["containers"]
        ],
    }


def finished_status(running: JsonObject, *, failed: bool, finished: str) -> JsonObject:
    exit_code = 1 if failed else 0
    containers = [
        {
            **status,
            "ready": False,
            "started": False,
            "state": {
                "terminated": {
                    "exitCode": exit_code,
                    "reason": "Error" if failed else "Completed",
                    "startedAt": status["state"]["running"]["startedAt"],
                    "finishedAt": finished,
                    "containerID": status["containerID"],
                }
            },
        }
        for status in running.get("containerStatuses", [])
    ]
    conditions = [
        {**c, "status": "False", "lastTransitionTime": finished, "reason": "PodCompleted"}
        if c["type"] in ("Ready", "ContainersReady")
        else c
        for c in running.get("conditions", [])
    ]
    return {
        **running,
        "phase": "Failed" if failed else "Succeeded",
        "containerStatuses": containers,
        "conditions": conditions,
    }


def pending_status(*, reason: str, when: str) -> JsonObject:
    return {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": reason,
                "lastTransitionTime": when,
            }
        ],
        "qosClass": "Burstable",
    }
