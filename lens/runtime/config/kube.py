"""Config sections of the roles that talk to the Kubernetes API: `kube` and `controller`.

config/root.py assembles them into Config; config/loading.py resolves `kube.source` and
`kube.kubeconfig` from the environment.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from lens.runtime import names
from lens.runtime.settings import setting


def check_object_ref(value: object) -> str | None:
    """A setting's check: NAMESPACE/NAME, or empty."""
    if value == "":
        return None
    if isinstance(value, str) and value.count("/") == 1:
        namespace, name = value.split("/")
        if names.is_dns_label(namespace) and name:
            return None
    return "expected NAMESPACE/NAME or empty"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class KubeConfig:
    """How a role reaches the Kubernetes API, and how it watches."""

    source: Literal["auto", "in-cluster", "kubeconfig", "url"] = setting(
        "auto",
        "Where the API's address and credentials come from: in-cluster (the pod's service "
        "account), kubeconfig (the file below), url (url, token_file, ca_file below), or auto: "
        "in-cluster inside a pod, else the kubeconfig file.",
    )
    kubeconfig: str = setting(
        "", "Kubeconfig file; empty means $KUBECONFIG, else ~/.kube/config.", path=True
    )
    context: str = setting("", "Kubeconfig context; empty uses its current context.")
    url: str = setting("", "API server URL (source url), e.g. https://10.0.0.1:6443.")
    token_file: str = setting(
        "", "Bearer token file (source url); re-read when it changes.", path=True
    )
    ca_file: str = setting(
        "", "CA bundle of the API server (source url); empty: system CAs.", path=True
    )
    insecure_skip_tls_verify: bool = setting(
        False, "Accept any API server certificate (source url); avoid."
    )
    page_size: int = setting(500, "Objects per page when listing.", minimum=1, maximum=100_000)
    watch_timeout_seconds: int = setting(
        300,
        "The server ends each watch after this long; it is reopened at once from where it was.",
        minimum=10,
        maximum=3600,
    )
    stall_seconds: float = setting(
        90.0,
        "A watch that delivers neither an event nor a bookmark for this long is dropped and "
        "reopened (API servers send a bookmark about every minute).",
        minimum=1,
        maximum=3600,
    )
    request_timeout_seconds: float = setting(
        30.0, "Longest one request (not a watch) may take.", minimum=0.1, maximum=600
    )


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ControllerConfig:
    """The controller: GPU pods and workloads into the store, finalizers, kubelet targets."""

    gpu_resources: tuple[str, ...] = setting(
        ("amd.com/gpu", "nvidia.com/gpu"),
        "Extended resources that make a pod a GPU pod when any container requests them.",
    )
    gpu_model_labels: tuple[str, ...] = setting(
        ("amd.com/gpu.product-name", "nvidia.com/gpu.product"),
        "Node labels naming the GPU model (pod_resources.gpu_model), the first present wins.",
    )
    snapshot_history: int = setting(
        20, "Snapshots kept per pod and per workload (the newest).", minimum=1, maximum=10_000
    )
    batch_changes: int = setting(
        1000, "Most changes written in one transaction.", minimum=1, maximum=100_000
    )
    pending_changes: int = setting(
        4000,
        "Most changes waiting for the writer; beyond it watches pause (memory stays bounded "
        "during a burst or a database outage). At least batch_changes.",
        minimum=1,
        maximum=1_000_000,
    )
    finalizer_kinds: tuple[str, ...] = setting(
        (),
        "Workload kinds (e.g. PyTorchJob, Job) that get Lens's finalizer, so their final state "
        "is stored before they go; empty: no finalizers.",
    )
    finalizer_grace_seconds: float = setting(
        60.0,
        "When the database cannot be reached, the longest a deleted workload waits for its "
        "final state to be stored before the finalizer is removed anyway (the loss is counted).",
        minimum=0,
        maximum=86400,
    )
    kubelet_service: str = setting(
        "kube-system/lens-kubelet",
        "Service (NAMESPACE/NAME) whose EndpointSlices list every node's kubelet ports "
        "10250, 10255 and 4194 for Prometheus; empty: off.",
        check=check_object_ref,
    )
    kubelet_service_interval_seconds: float = setting(
        10.0,
        "How often the kubelet Service and EndpointSlices are compared with the nodes.",
        minimum=1,
        maximum=3600,
    )
    leader_election: bool = setting(
        True, "Only the replica holding the Lease writes; off for a single replica."
    )
    lease: str = setting(
        "lens/lens-controller",
        "The coordination.k8s.io Lease (NAMESPACE/NAME) replicas elect their leader with.",
        check=check_object_ref,
    )
    lease_duration_seconds: float = setting(
        15.0,
        "How long a Lease holds without renewal; a new leader takes over within it.",
        minimum=1,
        maximum=3600,
    )
    identity: str = setting(
        "", "This replica's name in the Lease (the pod name); empty uses the host name."
    )
    clusters_secret: str = setting(
        "",
        "Secret (NAMESPACE/NAME) naming further clusters to watch: one key per cluster name, "
        "each value a kubeconfig (docs/multi-cluster.md); empty: this cluster only.",
        check=check_object_ref,
    )
    clusters_refresh_seconds: float = setting(
        30.0,
        "How often the clusters Secret is read again.",
        minimum=1,
        maximum=86400,
    )
