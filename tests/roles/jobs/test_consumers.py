"""The consumers' gauges: the original's names, percent, and a consumer gone takes its series
with it."""

from __future__ import annotations

import peewee

from lens.roles.jobs.consumers import ConsumerGauges, Consumers
from lens.runtime.clock import FakeClock
from lens.runtime.config import Config
from lens.runtime.selfmetrics import SelfMetrics
from lens.store import models
from lens.usage.consumers import Consumer


def _consumer(uid: str, utilization: float | None) -> Consumer:
    return Consumer(
        kind="PyTorchJob",
        name=f"{uid}-name",
        namespace="ml",
        uid=uid,
        gpus_allocated=16,
        active_pods=2,
        utilization_ratio=utilization,
    )


def test_gauges_show_each_consumer_and_drop_those_gone() -> None:
    metrics = SelfMetrics(process=False)
    gauges = ConsumerGauges(metrics)

    def value(name: str, uid: str) -> float | None:
        labels = {"kind": "PyTorchJob", "name": f"{uid}-name", "uid": uid}
        return metrics.registry.get_sample_value(name, labels)

    gauges.show([_consumer("a", 0.25), _consumer("b", None)])
    assert value("consumer_pod_gpu_usage", "a") == 25.0
    assert value("consumer_pod_gpu_allocated", "a") == 16 and value("consumer_pod_active", "a") == 2
    assert value("consumer_pod_gpu_usage", "b") is None  # unknown is no series, not 0
    assert value("consumer_pod_active", "b") == 2
    gauges.show([_consumer("b", 0.5)])
    assert value("consumer_pod_active", "a") is None
    assert value("consumer_pod_gpu_usage", "b") == 50.0


def test_a_run_reads_the_tables_and_sets_the_gauges(db: peewee.Database) -> None:
    models.GpuPod.create(
        cluster="default", namespace="ml", name="p", uid="pod-1", gpu_allocated=4, running=True
    )
    metrics = SelfMetrics(process=False)
    body = Consumers(Config(), db=db, clock=FakeClock(), gauges=ConsumerGauges(metrics))
    body.run()
    labels = {"kind": "Pod", "name": "p", "uid": "pod-1"}
    assert metrics.registry.get_sample_value("consumer_pod_gpu_allocated", labels) == 4
