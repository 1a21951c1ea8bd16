"""One cluster's pods and workloads into the store, on the small scenario played on the API
emulator: owner chains from per-kind caches, statuses, references, relists and restarts."""

from __future__ import annotations

import datetime
from collections.abc import Callable

import pytest

from lens.kube.workloads.clustersync import ClusterSync
from lens.store import models

from ..conftest import Played

pytestmark = pytest.mark.slow_timeout


def _workloads() -> dict[str, models.GpuWorkload]:
    return {w.name: w for w in models.GpuWorkload.select()}


def _status(name: str) -> str | None:
    row = _workloads().get(name)
    return row.status if row is not None else None


def _settle(sync: ClusterSync, eventually: Callable[..., None]) -> None:
    eventually(lambda: sync.wait_idle(0.5), timeout=20)


def test_the_small_scenario_lands_as_pods_workloads_and_their_tree(
    played: Played, eventually: Callable[..., None]
) -> None:
    played.player.run_until(200)  # bad-config failed at 150, nightly-bench's first run done at 120
    sync = played.sync()
    eventually(lambda: "llama-pretrain" in _workloads() and sync.wait_idle(0.2), timeout=20)
    _settle(sync, eventually)
    rows = _workloads()
    by_uid = {w.uid: w for w in rows.values()}
    assert rows["llama-pretrain"].kind == "PyTorchJob"
    assert (rows["llama-pretrain"].status, rows["llama-pretrain"].gpu_request) == ("Running", 8)
    assert rows["llama-pretrain"].parent_uid == ""
    replica_set = [w for w in rows.values() if w.kind == "ReplicaSet"]
    assert len(replica_set) == 1
    assert by_uid[replica_set[0].parent_uid].name == "vllm-serve"
    assert (rows["vllm-serve"].status, rows["vllm-serve"].gpu_request) == ("Running", 2)
    assert (rows["rayworker"].status, rows["rayworker"].gpu_request) == ("Running", 2)
    bad = rows["bad-config"]
    assert (bad.status, bad.status_reason) == ("Failed", "BackoffLimitExceeded")
    assert bad.end_at is not None
    assert rows["bad-config"].gpu_request == 1, "first seen finished: what its pods requested"
    cron_runs = [w for w in rows.values() if w.kind == "Job" and w.parent_uid]
    assert by_uid[cron_runs[0].parent_uid].name == "nightly-bench"
    assert (cron_runs[0].status, cron_runs[0].status_reason) == ("Succeeded", "")
    assert "debug-shell" not in {p.name for p in models.GpuPod.select()}
    # Every GPU pod is referenced once by every level above it.
    references = [(r.workload_uid, r.pod_uid) for r in models.WorkloadPodReference.select()]
    assert len(references) == len(set(references))
    pods_of_deployment = [r for r in references if r[0] == rows["vllm-serve"].uid]
    assert len(pods_of_deployment) == 1
    assert pods_of_deployment[0][1] in {r[1] for r in references if r[0] == replica_set[0].uid}
    models_of = {r.gpu_model for r in models.PodResource.select()}
    assert models_of == {"AMD_Instinct_MI300X"}
    assert models.GpuWorkloadSnapshot.select().count() == len(rows)


def test_workloads_follow_their_pods_and_deletions(
    played: Played, eventually: Callable[..., None]
) -> None:
    sync = played.sync()
    _settle(sync, eventually)
    played.player.run_until(700)  # eval-mmlu finished at 630
    eventually(lambda: _status("eval-mmlu") == "Succeeded", timeout=20)
    eval_row = _workloads()["eval-mmlu"]
    assert eval_row.gpu_request == 1, "a finished workload keeps the request it last had"
    assert eval_row.end_at == datetime.datetime.fromtimestamp(
        played.player.start_time + 630, datetime.UTC
    )
    job = played.kube.resource("batch/v1", "Job")
    played.kube.store.delete(job, "ml", "eval-mmlu", propagation="Background")
    eventually(lambda: _workloads()["eval-mmlu"].deleted_at is not None, timeout=20)
    deleted = _workloads()["eval-mmlu"]
    assert deleted.status == "Succeeded", "it ended before it was deleted"
    assert deleted.end_at == eval_row.end_at, "ended when it finished"


def test_a_restart_writes_nothing_twice_and_closes_what_went_meanwhile(
    played: Played, eventually: Callable[..., None]
) -> None:
    played.player.run_until(100)
    first = played.sync()
    _settle(first, eventually)
    first.stop()
    counts = {m: m.select().count() for m in (models.GpuPodEvent, models.GpuWorkloadSnapshot)}
    job = played.kube.resource("batch/v1", "Job")
    played.kube.store.delete(job, "ml", "eval-mmlu", propagation="Background")
    played.kube.settle()
    second = played.sync()
    _settle(second, eventually)
    eventually(lambda: _status("eval-mmlu") == "Deleted", timeout=20)
    assert models.GpuWorkloadSnapshot.select().count() == counts[models.GpuWorkloadSnapshot]
    assert models.GpuPodEvent.select().count() == counts[models.GpuPodEvent]
    eval_pods = [p for p in models.GpuPod.select() if p.name.startswith("eval-mmlu")]
    assert eval_pods and all(p.deleted for p in eval_pods)
