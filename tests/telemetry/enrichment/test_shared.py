"""The index shared between its writer and its readers: generations, and series relabelled from
many threads while the loader applies changes, each answer whole (never half of a change)."""

from __future__ import annotations

import datetime
import threading

import peewee

from lens.telemetry.enrichment.identity import Labels, SeriesIdentity
from lens.telemetry.enrichment.index import EnrichmentIndex, PodFacts
from lens.telemetry.enrichment.relabeling import WorkloadRelabeler
from lens.telemetry.enrichment.shared import SharedIndex
from tests.telemetry.enrichment import labcluster
from tests.telemetry.enrichment.labcluster import NVIDIA_UUIDS, TRAINER_0

T0 = datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC)
FACTS = PodFacts(uid="p", name="p", namespace="ml", node="n1", ended=False, stamp=T0)


def test_the_generation_moves_with_changes_only() -> None:
    shared = SharedIndex()
    start = shared.generation
    with shared.changing() as index:
        index.put_pod(FACTS, now=T0)
    assert shared.generation == start + 1
    assert shared.attribute(SeriesIdentity(pod_uids=("p",))) is not None
    with shared.changing() as index:
        index.put_pod(FACTS, now=T0)  # told again: no change
    assert shared.generation == start + 1
    shared.replace(EnrichmentIndex())
    assert shared.generation == start + 2
    assert shared.attribute(SeriesIdentity(pod_uids=("p",))) is None


GPU_0: Labels = (("Hostname", "node-a"), ("__name__", "DCGM_FI_DEV_GPU_UTIL"), ("gpu", "0"))
GPU_3: Labels = (("Hostname", "node-a"), ("__name__", "DCGM_FI_DEV_GPU_UTIL"), ("gpu", "3"))
ROUNDS = 8


def test_series_relabelled_while_the_index_changes_get_whole_answers(db: peewee.Database) -> None:
    """Pods flip-0, flip-1... take node-a's GPU 3 in turn while readers relabel its series:
    each answer is nobody's or one flip pod's whole labels, GPU 0 stays trainer-0's."""
    lab = labcluster.build(db, ended_grace_seconds=0)
    lab.loader.refresh()
    relabeler = WorkloadRelabeler(lab.shared, labcluster.settings())
    stop = threading.Event()
    problems: list[str] = []
    answers = [0]

    def read() -> None:
        seen = relabeler.generation()
        while not stop.is_set():
            generation = relabeler.generation()
            if generation < seen:
                problems.append("generation went back")
            seen = generation
            if relabeler.relabel(GPU_0) != tuple(sorted({**dict(GPU_0), **TRAINER_0}.items())):
                problems.append("GPU 0 lost its pod")
            found = relabeler.relabel(GPU_3)
            if found is not None:
                got = dict(found)
                if got.get("pod_uid") != f"uid-{got.get('pod')}" or got["namespace"] != "ml":
                    problems.append(f"mixed answer {got}")
            answers[0] += 1

    readers = [threading.Thread(target=read) for _ in range(4)]
    for reader in readers:
        reader.start()
    try:
        previous = None
        for turn in range(ROUNDS):
            lab.clock.advance(10)
            if previous is not None:
                lab.cluster.delete(previous)
            previous = lab.cluster.pod(f"uid-flip-{turn}", name=f"flip-{turn}", node="node-a")
            lab.cluster.container(
                previous, node="node-a", container_id=f"c-{turn}", gpus=[(3, NVIDIA_UUIDS[3])]
            )
            lab.loader.refresh()
            assert dict(relabeler.relabel(GPU_3) or ())["pod"] == f"flip-{turn}"
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    assert problems == []
    assert answers[0] > ROUNDS
