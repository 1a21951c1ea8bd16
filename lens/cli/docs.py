"""`lens docs metrics`: docs/metrics.md, every metric family of every role."""

from __future__ import annotations

import typer

docs_app = typer.Typer(help="Generate reference documents.", no_args_is_help=True)


@docs_app.command("metrics")
def docs_metrics() -> None:
    """Print docs/metrics.md: every metric family with its type, labels and help."""
    from lens.containers.node import shipping, watching
    from lens.containers.server import receiving
    from lens.kube.workloads import syncmetrics
    from lens.reports.storing.recording import RecordingMetrics
    from lens.roles.api.requestmetrics import RequestMetrics
    from lens.roles.jobs import (
        allocation,
        consumers,
        idling,
        leading,
        multistorage,
        retention,
        storagescan,
    )
    from lens.roles.node_agent import collectors
    from lens.roles.node_agent.reporting import ReportMetrics
    from lens.runtime import config, metricsdoc
    from lens.runtime.clock import SystemClock
    from lens.runtime.process import Process
    from lens.runtime.selfmetrics import SelfMetrics

    defaults = config.Config()
    runtime = Process("docs", server=defaults.server, service=defaults.service)
    agent_events, jobs_events = SelfMetrics(process=False), SelfMetrics(process=False)
    controller, api = SelfMetrics(process=False), SelfMetrics(process=False)
    shipping.ShipperMetrics(agent_events)
    watching.WatcherMetrics(agent_events)
    ReportMetrics(agent_events)
    receiving.ReceiverMetrics(jobs_events)
    RecordingMetrics(jobs_events)
    jobs_events.gauge(*leading.LEADER_GAUGE)
    retention.TableRetention((), clock=SystemClock(), metrics=jobs_events)
    idling.IdleGauges(jobs_events)
    consumers.ConsumerGauges(jobs_events)
    allocation.AllocationGauges(jobs_events)
    storagescan.StorageGauges(jobs_events)
    multistorage.MultiStorageGauges(jobs_events)
    syncmetrics.SyncMetrics(controller)
    controller.gauge(*syncmetrics.LEADER_GAUGE)
    RequestMetrics(api)
    sections = [
        ("Runtime (every role)", runtime.metrics.declared),
        *collectors.metric_docs(),
        ("Node agent: container events and device reports", agent_events.declared),
        (
            "Jobs: event server, device reports and periodic jobs",
            jobs_events.declared,
        ),
        ("Controller", controller.declared),
        ("API", api.declared),
    ]
    typer.echo(metricsdoc.render_markdown(sections), nl=False)
