"""The enrichment index of the remote-write benchmark's cluster (bench/remotewrite_load.py): on
each node, every even GPU held by a pod of a PyTorchJob of its own, as the index would hold it
after reading the store (pods, their containers' GPUs, the nodes' GPUs, the workloads)."""

from __future__ import annotations

import datetime

from lens.telemetry.enrichment import identity
from lens.telemetry.enrichment.index import (
    GPU,
    ContainerFacts,
    DeviceFacts,
    EnrichmentIndex,
    GpuFacts,
    PodFacts,
    Workload,
)
from lens.telemetry.enrichment.settings import EnrichmentSettings
from lens.telemetry.enrichment.shared import SharedIndex
from lens.telemetry.remotewrite.protocol import Labels

NOW = datetime.datetime(2026, 8, 23, 12, 0, tzinfo=datetime.UTC)
SETTINGS = EnrichmentSettings(cluster="bench")


def index_of(series: list[Labels]) -> SharedIndex:
    """The index in which the GPUs named by `series` (the corpus's label sets) on even indexes
    are held by pods, one pod and one PyTorchJob per node."""
    gpus: dict[tuple[str, int], GpuFacts] = {}
    for labels in series:
        found = dict(labels)
        node = found.get("Hostname") or found.get("hostname") or ""
        index = int(found.get("gpu") or found.get("gpu_id") or -1)
        uuid = identity.normal_uuid(found.get("UUID") or found.get("gpu_uuid") or "") or ""
        pci = identity.normal_pci(found.get("pci_bus_id") or "") or ""
        serial = identity.normal_serial(found.get("serial_number") or "") or ""
        key = (node, index)
        if node and index >= 0 and key not in gpus:
            gpus[key] = GpuFacts(
                row_id=len(gpus) + 1, node=node, uuid=uuid, index=str(index), pci=pci, serial=serial
            )
    shared = SharedIndex()
    with shared.changing() as index:
        for facts in gpus.values():
            index.put_gpu(facts)
        for node in sorted({node for node, _ in gpus}):
            held = [gpus[key] for key in sorted(gpus) if key[0] == node and key[1] % 2 == 0]
            _hold(index, node, held)
    return shared


def _hold(index: EnrichmentIndex, node: str, held: list[GpuFacts]) -> None:
    pod_uid, job_uid = f"pod-{node}", f"job-{node}"
    # The pod's name as dcgm-exporter's series of the corpus name it (llama-<node number>-0).
    pod_name = f"llama-{int(node.rsplit('-', 1)[1])}-0"
    index.put_pod(
        PodFacts(
            uid=pod_uid,
            name=pod_name,
            namespace="ml",
            node=node,
            ended=False,
            owner_uid=job_uid,
            stamp=NOW,
        ),
        now=NOW,
    )
    index.put_container(
        ContainerFacts(
            container_id=f"c-{node}",
            pod_uid=pod_uid,
            pod_name=pod_name,
            pod_namespace="ml",
            node=node,
            live=True,
            stamp=NOW,
            devices=tuple(
                DeviceFacts(kind=GPU, number=int(g.index), id=g.uuid) for g in held if g.uuid
            ),
        ),
        now=NOW,
    )
    index.set_top(pod_uid, job_uid)
    index.put_workload(Workload(uid=job_uid, kind="PyTorchJob", name=f"llama-{node}", team="nlp"))
