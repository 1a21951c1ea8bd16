"""Lens's cluster figures against the truth a replayed scenario enacted (issue 18, point 3).

The medium preset (100 nodes x 8 MI300X, 500 GPU pods of every kind) is replayed at speed
through the real pipeline (groundtruth.py): the controller watching the API emulator, a node
agent per node attributing GPUs to the containers of a Docker stand-in and streaming container
events and GPU-minutes to `lens jobs`, and the jobs' loop bodies — on SQLite (`lens up`'s store)
and on PostgreSQL (a cluster's); each query the jobs and the API run is also tested on MariaDB
in tests/store and tests/usage.
What Lens computes from its tables is compared with what the player recorded it did
(lens/sim/scenario/truth.py, figures.py):

- allocation rate at every minute within 0.5 %, each node's ratio exactly;
- consumers at every minute: GPUs and pods exact, utilization within 0.5 %;
- GPU-hours held and used per top-level workload and namespace, every 20 minutes: within 0.5 %;
- idle (GPU, pod) minutes: precision and recall of at least 99 %;
- each workload's utilization per node over the replay (/v1/workloads/{uid}/metrics): within
  0.5 %; and every figure of its series, per minute and over the replay, the same from the
  per-pod sums (gpu_minute_pods) as from the holder rows they sum.

And the small preset (whose namespaces and top-level workloads carry a team label, as the
demo's do): GPU-hours per team, within 0.5 %.

The replay covers the preset's first SPAN_MINUTES (its batch jobs arrive over the first hour
and some end within it; services and training run on), not its whole length (about three hours
until the last batch job ends), to keep each run within minutes (three on a quick host, seven
on 2026-11-28's).
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from pathlib import Path

import peewee
import pytest

from lens.roles.jobs import idling
from lens.sim.scenario import spec
from lens.sim.scenario.figures import NAMESPACE, TEAM, WORKLOAD, Figures, IdleMinute
from lens.store import database, models
from lens.store.queries import seriesworkloads
from lens.store.queries.timerange import TimeRange
from tests.roles.jobs.groundtruth import Replay, replay
from tests.store.before0011 import as_if_all_before_0011

# Each replay took 412 s alone on 2026-11-28's host (SQLite; a host whose system calls cost
# several times last week's), and more beside the other worker's tests; twice that is a hang.
pytestmark = pytest.mark.timeout(900)
log = logging.getLogger(__name__)

TOLERANCE = 0.005  # the issue's: within 0.5 %
CLUSTER = "default"
HALF_HOUR = 1800
PRECISION = RECALL = 0.99
# A whole hour of a fixed day: the replay stays within one UTC day (GPU-hours are per day).
START = int(datetime.datetime(2026, 6, 1, 8, 0, tzinfo=datetime.UTC).timestamp())
SPAN_MINUTES = 65
GPU_HOURS_EVERY = 20  # minutes


class Margins:
    """The largest relative difference seen per figure and how often each was compared, and
    the idle minutes' precision and recall: the test's report (logged at info)."""

    def __init__(self) -> None:
        self.worst: dict[str, float] = {}
        self.compared: dict[str, int] = {}
        self.idle = (0.0, 0.0)

    def report(self) -> str:
        figures = ", ".join(
            f"{name}: {self.compared[name]} compared, worst {worst:.2e}"
            for name, worst in self.worst.items()
        )
        return f"{figures}; idle minutes: precision {self.idle[0]:.4f}, recall {self.idle[1]:.4f}"

    def check(self, figure: str, lens: float, truth: float) -> None:
        difference = abs(lens - truth) / abs(truth) if truth else abs(lens)
        self.worst[figure] = max(self.worst.get(figure, 0.0), difference)
        self.compared[figure] = self.compared.get(figure, 0) + 1
        assert lens == pytest.approx(truth, rel=TOLERANCE, abs=1e-9), figure


def _labels(key: tuple[tuple[str, str], ...]) -> dict[str, str]:
    return dict(key)


def _check_allocation(played: Replay, figures: Figures, now: int, margins: Margins) -> None:
    jobs = played.jobs
    assert jobs is not None
    jobs.allocation.run()
    rate = jobs.gauge("gpu_allocation_rate", cluster="default")
    assert rate is not None
    margins.check("allocation rate", rate, figures.allocation_rate(now))
    ratios = {
        _labels(k)["node"]: v for k, v in jobs.samples("lens_node_gpu_allocation_ratio").items()
    }
    capacity = played.truth.capacity
    expected = {n: a / capacity[n] for n, a in figures.node_allocation(now).items()}
    assert ratios == pytest.approx(expected, abs=1e-12)


def _check_consumers(played: Replay, figures: Figures, now: int, margins: Margins) -> None:
    jobs = played.jobs
    assert jobs is not None
    jobs.consumers.run()
    window = jobs.config.jobs.consumers_utilization_minutes
    truth = figures.consumers(now, window_minutes=window)
    allocated = {
        _labels(k)["uid"]: v for k, v in jobs.samples("consumer_pod_gpu_allocated").items()
    }
    active = {_labels(k)["uid"]: v for k, v in jobs.samples("consumer_pod_active").items()}
    usage = {_labels(k)["uid"]: v for k, v in jobs.samples("consumer_pod_gpu_usage").items()}
    assert allocated == {uid: c.gpus_allocated for uid, c in truth.items()}
    assert active == {uid: c.active_pods for uid, c in truth.items()}
    known = {uid: c for uid, c in truth.items() if c.utilization_ratio is not None}
    assert usage.keys() == known.keys()
    for uid, consumer in known.items():
        assert consumer.utilization_ratio is not None
        margins.check("consumer utilization", usage[uid], 100 * consumer.utilization_ratio)


def _stored_hours(played: Replay) -> dict[tuple[str, str], tuple[float, float]]:
    """(group kind, group value) -> (held, used) GPU-hours of every day, over GPU models."""
    jobs = played.jobs
    assert jobs is not None
    table = models.GpuHoursDaily
    summed: dict[tuple[str, str], tuple[float, float]] = {}
    with database.session(jobs.db):
        for row in table.select().where(table.group_kind.in_([WORKLOAD, NAMESPACE])):
            held, used = summed.get((row.group_kind, row.group_value), (0.0, 0.0))
            summed[(row.group_kind, row.group_value)] = (
                held + row.held_gpu_hours,
                used + row.used_gpu_hours,
            )
    return summed


def _check_gpu_hours(played: Replay, figures: Figures, now: int, margins: Margins) -> None:
    jobs = played.jobs
    assert jobs is not None
    jobs.roll_up()
    jobs.gpu_hours.run()
    stored = _stored_hours(played)
    for kind in (WORKLOAD, NAMESPACE):
        truth = figures.gpu_seconds(played.start, now, by=kind)
        found = {value: hours for (k, value), hours in stored.items() if k == kind}
        assert found.keys() == truth.keys(), kind
        for key, seconds in truth.items():
            held, used = found[key]
            margins.check(f"held GPU-hours per {kind}", held, seconds.held / 3600)
            margins.check(f"used GPU-hours per {kind}", used, seconds.used / 3600)


def _stored_idle(played: Replay, db: peewee.Database) -> tuple[set[IdleMinute], dict[str, str]]:
    """The (GPU, pod) minutes of every idle interval Lens stored, GPUs by index (an agent names
    an AMD GPU by its unique_id); and each pod's top-level workload as the intervals say."""
    index = {
        (node, gpu.unique_id): gpu.index
        for node in played.nodes
        for gpu in played.player.gpus(node)
    }
    found: set[IdleMinute] = set()
    workloads: dict[str, str] = {}
    table = models.GpuIdleInterval
    with database.session(db):
        for row in table.select():
            gpu = index[(row.node_name, row.gpu_uuid)]
            workloads[row.pod_uid] = row.workload_uid
            minute = row.started_at
            while minute < row.ended_at:
                at = int(minute.replace(tzinfo=datetime.UTC).timestamp())
                found.add(IdleMinute(row.node_name, gpu, row.pod_uid, at))
                minute += datetime.timedelta(minutes=1)
    return found, workloads


def _check_idle(played: Replay, figures: Figures, margins: Margins) -> None:
    jobs = played.jobs
    assert jobs is not None
    config = jobs.config.jobs
    truth = figures.idle_minutes(
        floor=config.idle_utilization_floor,
        window_minutes=config.idle_window_minutes,
        until=played.end - int(idling.LAG.total_seconds()),  # minutes are read that late
    )
    stored, workloads = _stored_idle(played, jobs.db)
    assert len(truth) > 1000, "the scenario left GPUs idle long enough"
    hits = len(stored & truth)
    margins.idle = (hits / len(stored) if stored else 0.0, hits / len(truth))
    tops = {h.pod_uid: h.workload.uid for h in played.truth.holds}
    assert workloads == {pod: tops[pod] for pod in workloads}
    assert margins.idle >= (PRECISION, RECALL), margins.idle


def _same_series(
    rolled: seriesworkloads.WorkloadMetrics, joined: seriesworkloads.WorkloadMetrics
) -> None:
    """Every point the same but for the order of the additions behind it."""
    for figure in ("utilization", "memory", "power"):
        lines, others = getattr(rolled, figure), getattr(joined, figure)
        assert [line.node_name for line in lines] == [line.node_name for line in others]
        for line, other in zip(lines, others, strict=True):
            assert [p.timestamp for p in line.points] == [p.timestamp for p in other.points]
            values = [p.value for p in other.points]
            assert [p.value for p in line.points] == pytest.approx(values, rel=1e-9), figure


def _check_workload_series(played: Replay, figures: Figures, margins: Margins) -> int:
    """Each workload's series over the replay, by half hours (read from minutes: a step of an
    hour reads hours) and by minutes; the workloads compared."""
    jobs = played.jobs
    assert jobs is not None
    halves = TimeRange(start=played.start, end=played.end, step=HALF_HOUR)
    compared = 0
    for uid in sorted({h.workload.uid for h in played.truth.holds if h.gpus}):
        found = {}
        for span in (halves, dataclasses.replace(halves, step=60)):
            rolled = seriesworkloads.workload_metrics(jobs.db, cluster=CLUSTER, uid=uid, span=span)
            with as_if_all_before_0011(jobs.db, CLUSTER):
                joined = seriesworkloads.workload_metrics(
                    jobs.db, cluster=CLUSTER, uid=uid, span=span
                )
            assert (rolled is None) == (joined is None), uid
            if rolled is not None and joined is not None:
                _same_series(rolled, joined)
            found[span.step] = rolled
        series = found[HALF_HOUR]
        if series is None:
            continue  # a bare pod: no workload row of its own
        compared += 1
        for line in series.utilization:
            for point in line.points:
                end = min(point.timestamp + HALF_HOUR, played.end)
                truth = figures.utilization(uid, point.timestamp, end, node=line.node_name)
                assert truth is not None, (uid, line.node_name, point.timestamp)
                margins.check("workload utilization per node", point.value, 100 * truth)
    return compared


@pytest.mark.parametrize("database_engine", ["sqlite", "postgresql"], indirect=True)
def test_lens_figures_match_what_the_scenario_enacted(
    empty_database_url: str, memory_dir: Path
) -> None:
    end = START + SPAN_MINUTES * 60
    margins = Margins()
    with replay(
        spec.medium(), start=START, end=end, url=empty_database_url, directory=memory_dir
    ) as played:
        figures = Figures(played.truth)

        def at_minute(now: int) -> None:
            assert played.jobs is not None
            _check_allocation(played, figures, now, margins)
            played.jobs.idle.run()
            _check_consumers(played, figures, now, margins)
            if (now - START) % (GPU_HOURS_EVERY * 60) == 0 or now == end:
                _check_gpu_hours(played, figures, now, margins)

        played.play(at_minute)
        _check_idle(played, figures, margins)
        workloads = _check_workload_series(played, figures, margins)
    log.info("ground truth margins: %s", margins.report())
    assert margins.compared["allocation rate"] == SPAN_MINUTES
    assert margins.compared["consumer utilization"] > 100 * SPAN_MINUTES
    assert min(margins.compared[f"held GPU-hours per {k}"] for k in (WORKLOAD, NAMESPACE)) > 20
    assert workloads > 50


@pytest.mark.parametrize("database_engine", ["sqlite"], indirect=True)
def test_gpu_hours_per_team_match_what_the_small_preset_enacted(
    empty_database_url: str, memory_dir: Path
) -> None:
    """GPU-hours per team (jobs.team_label, `team`) are each top-level workload's team's, as
    the small preset labels them: the research team's training, stateful set and batch jobs,
    the inference team's service."""
    end = START + 30 * 60
    margins = Margins()
    with replay(
        spec.small(), start=START, end=end, url=empty_database_url, directory=memory_dir
    ) as played:
        figures = Figures(played.truth)
        played.play(lambda _now: None)
        jobs = played.jobs
        assert jobs is not None and jobs.config.jobs.team_label == "team"
        jobs.roll_up()
        jobs.gpu_hours.run()
        truth = figures.gpu_seconds(played.start, end, by=TEAM)
        table = models.GpuHoursDaily
        found: dict[str, tuple[float, float]] = {}
        with database.session(jobs.db):
            query = table.select().where(
                (table.group_kind == "label") & (table.group_key == "team")
            )
            for row in query:
                held, used = found.get(row.group_value, (0.0, 0.0))
                found[row.group_value] = (held + row.held_gpu_hours, used + row.used_gpu_hours)
    assert set(truth) == {"research", "inference"}, "every GPU pod is a team's"
    # Half an hour of vllm-serve's 2 GPUs; of llama-pretrain's 8, rayworker's 2 and the jobs'.
    assert truth["inference"].held == 2 * 30 * 60
    assert truth["research"].held > 10 * 30 * 60
    assert found.keys() == truth.keys()
    for team, seconds in truth.items():
        margins.check("held GPU-hours per team", found[team][0], seconds.held / 3600)
        margins.check("used GPU-hours per team", found[team][1], seconds.used / 3600)
    log.info("ground truth margins: %s", margins.report())
