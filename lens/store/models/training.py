"""What training logs tell beyond each iteration's figures: training_stragglers, the ranks or pods
of a run flagged as stragglers (lens/telemetry/trainlogs/stragglers.py finds them,
stragglerstore.py writes them). training_performance itself is in workloads.py, as the
original kept it."""

from __future__ import annotations

import peewee

from lens.store.fields import UtcDateTimeField
from lens.store.models.base import NAME, UID, LensModel, created, text


class TrainingStraggler(LensModel):
    """[started_at, ended_at) in which one source (a rank or a pod) of a training run stayed
    above the run's median iteration time by more than the configured share; `open` while
    still flagged. serial is the run (training_performance.serial); the shares are ratios
    (0.2: 20 % above the median), over the intervals it was above."""

    workload_uid = peewee.CharField(max_length=UID)
    serial = peewee.IntegerField()
    source = peewee.CharField(max_length=NAME)
    node_name = text(NAME)
    started_at = UtcDateTimeField()
    ended_at = UtcDateTimeField()
    intervals = peewee.IntegerField()
    mean_share_above_median = peewee.DoubleField()
    peak_share_above_median = peewee.DoubleField()
    open = peewee.BooleanField()
    updated_at = created()

    class Meta:
        table_name = "training_stragglers"
        indexes = (
            (("cluster", "workload_uid", "serial", "source", "started_at"), True),
            (("cluster", "open"), False),
            (("cluster", "ended_at"), False),
        )
