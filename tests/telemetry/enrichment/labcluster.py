"""The lab cluster most enrichment tests label series of, and the labels known to be right.

node-a holds NVIDIA-style GPUs (NVML uuids, PCI addresses), node-b AMD-style ones (sysfs
unique_id as uuid, serial numbers). A PyTorchJob `llama` (team vision) runs trainer-0 on node-a
(GPUs 0 and 1, and RDMA device mlx5_0) and trainer-1 on node-b (GPU 2); a Deployment `serve`,
through its ReplicaSet, runs serve-x on node-a's GPU 2. node-a's GPU 3 is nobody's.
"""

from __future__ import annotations

import dataclasses

import peewee

from lens.kube.machinery.cache import JsonObject
from lens.telemetry.enrichment.loading import IndexLoader
from lens.telemetry.enrichment.settings import EnrichmentSettings
from lens.telemetry.enrichment.shared import SharedIndex
from lens.usage import workloads
from tests.telemetry.enrichment.clusterrows import CLUSTER, Clock, LabCluster, workload_object

NVIDIA_UUIDS = [f"GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f{i}" for i in range(4)]
NVIDIA_PCI = ["0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0"]
AMD_UUIDS = [f"9a8b7c6d5e4f300{i}" for i in range(4)]
AMD_SERIALS = [f"PCB04{i}" for i in range(4)]

# What each pod's series get (labels the relabeler adds; none of them present before).
TRAINER_0 = {
    "pod": "trainer-0",
    "namespace": "ml",
    "pod_uid": "uid-trainer-0",
    "workload_kind": "PyTorchJob",
    "workload_name": "llama",
    "workload_uid": "uid-llama",
    "team": "vision",
}
TRAINER_1 = {**TRAINER_0, "pod": "trainer-1", "pod_uid": "uid-trainer-1"}
SERVE_X = {
    "pod": "serve-x",
    "namespace": "web",
    "pod_uid": "uid-serve-x",
    "workload_kind": "Deployment",
    "workload_name": "serve",
    "workload_uid": "uid-serve",
}


@dataclasses.dataclass
class Lab:
    cluster: LabCluster
    clock: Clock
    shared: SharedIndex
    loader: IndexLoader
    pods: dict[str, JsonObject]
    job: JsonObject  # llama


def settings(**changes: object) -> EnrichmentSettings:
    return dataclasses.replace(EnrichmentSettings(cluster=CLUSTER), **changes)  # type: ignore[arg-type]


def build(db: peewee.Database, **changes: object) -> Lab:
    """The lab written, and a loader (not refreshed yet) with the settings changed so."""
    clock = Clock()
    lab = LabCluster(db, clock)
    lab.gpus("node-a", [(i, NVIDIA_UUIDS[i], NVIDIA_PCI[i], f"NV{i}") for i in range(4)])
    lab.gpus("node-b", [(i, AMD_UUIDS[i], f"0000:0{i}:00.0", AMD_SERIALS[i]) for i in range(4)])
    job = workload_object(
        "uid-llama", "PyTorchJob", name="llama", labels={"team": "vision", "org/team": "cv"}
    )
    deployment = workload_object("uid-serve", "Deployment", name="serve", namespace="web")
    replicas = workload_object(
        "uid-serve-rs", "ReplicaSet", name="serve-7c9", namespace="web", owner=deployment
    )
    pods = {
        "trainer-0": lab.pod("uid-trainer-0", name="trainer-0", node="node-a", owner=job),
        "trainer-1": lab.pod("uid-trainer-1", name="trainer-1", node="node-b", owner=job),
        "serve-x": lab.pod(
            "uid-serve-x", name="serve-x", node="node-a", namespace="web", owner=replicas
        ),
    }
    lab.workloads([job, deployment, replicas])
    lab.container(
        pods["trainer-0"],
        node="node-a",
        container_id="c-t0",
        gpus=[(0, NVIDIA_UUIDS[0]), (1, NVIDIA_UUIDS[1])],
        rdma=["mlx5_0"],
    )
    lab.container(pods["trainer-1"], node="node-b", container_id="c-t1", gpus=[(2, AMD_UUIDS[2])])
    lab.container(pods["serve-x"], node="node-a", container_id="c-sx", gpus=[(2, NVIDIA_UUIDS[2])])
    shared, loader = load(db, clock, **changes)
    return Lab(cluster=lab, clock=clock, shared=shared, loader=loader, pods=pods, job=job)


def load(db: peewee.Database, clock: Clock, **changes: object) -> tuple[SharedIndex, IndexLoader]:
    """A new index of the store's rows and its loader (not refreshed yet)."""
    shared = SharedIndex()
    loader = IndexLoader(
        db,
        settings=settings(**changes),
        shared=shared,
        top_workloads=workloads.top_workloads,
        wall_time=clock,
    )
    return shared, loader
