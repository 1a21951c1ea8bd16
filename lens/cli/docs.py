"""`lens docs metrics`: docs/metrics.md, every metric family of every role."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from lens.runtime.selfmetrics import SelfMetrics

docs_app = typer.Typer(help="Generate reference documents.", no_args_is_help=True)


@docs_app.command("metrics")
def docs_metrics() -> None:
    """Print docs/metrics.md: every metric family with its type, labels and help."""
    from lens.roles.node_agent import collectors
    from lens.runtime import config, metricsdoc
    from lens.runtime.process import Process

    defaults = config.Config()
    runtime = Process("docs", server=defaults.server, service=defaults.service)
    sections = [
        ("Runtime (every role)", runtime.metrics.declared),
        *collectors.metric_docs(),
        ("Node agent: container events and device reports", _agent_families().declared),
        ("Jobs: event server, device reports and periodic jobs", _jobs_families().declared),
        ("Controller", _controller_families().declared),
        ("API", _api_families().declared),
        ("Tuning daemon", _tune_families().declared),
        ("Netflow", _netflow_families().declared),
    ]
    typer.echo(metricsdoc.render_markdown(sections), nl=False)


def _agent_families() -> SelfMetrics:
    from lens.containers.node import shipping, watching
    from lens.roles.node_agent.reporting import ReportMetrics
    from lens.runtime.selfmetrics import SelfMetrics

    families = SelfMetrics(process=False)
    shipping.ShipperMetrics(families)
    watching.WatcherMetrics(families)
    ReportMetrics(families)
    return families


def _jobs_families() -> SelfMetrics:
    from lens.containers.server import receiving
    from lens.reports.storing.recording import RecordingMetrics
    from lens.roles.jobs import (
        allocation,
        consumers,
        idling,
        leading,
        multistorage,
        retention,
        storagescan,
    )
    from lens.runtime.clock import SystemClock
    from lens.runtime.selfmetrics import SelfMetrics

    families = SelfMetrics(process=False)
    receiving.ReceiverMetrics(families)
    RecordingMetrics(families)
    families.gauge(*leading.LEADER_GAUGE)
    retention.TableRetention((), clock=SystemClock(), metrics=families)
    idling.IdleGauges(families)
    consumers.ConsumerGauges(families)
    allocation.AllocationGauges(families)
    storagescan.StorageGauges(families)
    multistorage.MultiStorageGauges(families)
    _telemetry_families(families)
    return families


def _telemetry_families(families: SelfMetrics) -> None:
    from lens.roles.jobs.telemetry import IndexMetrics
    from lens.telemetry.remotewrite.forwarding import ForwardMetrics
    from lens.telemetry.remotewrite.receiving import ReceiverMetrics
    from lens.telemetry.trainlogs.intakemetrics import IntakeMetrics
    from lens.telemetry.trainlogs.stragglers import StragglerGauge

    ReceiverMetrics(families)
    ForwardMetrics(families)
    IndexMetrics(families)
    IntakeMetrics(families)
    StragglerGauge(families)


def _controller_families() -> SelfMetrics:
    from lens.kube.workloads import syncmetrics
    from lens.runtime.selfmetrics import SelfMetrics

    families = SelfMetrics(process=False)
    syncmetrics.SyncMetrics(families)
    families.gauge(*syncmetrics.LEADER_GAUGE)
    return families


def _api_families() -> SelfMetrics:
    from lens.roles.api.requestmetrics import RequestMetrics
    from lens.runtime.selfmetrics import SelfMetrics

    families = SelfMetrics(process=False)
    RequestMetrics(families)
    return families


def _tune_families() -> SelfMetrics:
    from lens.roles.tune.tunemetrics import TuneMetrics
    from lens.runtime.selfmetrics import SelfMetrics

    families = SelfMetrics(process=False)
    TuneMetrics(families)
    return families


def _netflow_families() -> SelfMetrics:
    from lens.netflow.netflowmetrics import NetflowMetrics
    from lens.netflow.peerpodmetrics import PeerPodMetrics
    from lens.runtime.selfmetrics import SelfMetrics

    families = SelfMetrics(process=False)
    NetflowMetrics(families, ttl_seconds=600)
    PeerPodMetrics(families, ttl_seconds=600)
    return families
