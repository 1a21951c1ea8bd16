"""Which `lens jobs` replica runs the periodic jobs: the holder of `jobs.lease`, or this one
when no Lease is configured (a single replica). The event server serves on every replica
either way; only the jobs that must not run twice at once wait for leadership."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

import kubernetes

from lens.kube.machinery import clients
from lens.kube.machinery.leader import LeaderElector, LeaseSettings
from lens.runtime.config import Config
from lens.runtime.periodic import Loop
from lens.runtime.process import Process

LEADER_GAUGE = (
    "lens_jobs_leader",
    "1 while this replica runs the periodic jobs (holds jobs.lease, or none is configured).",
)


class JobsLeadership:
    """A service part: the Lease elector, started and stopped with the role."""

    name = "jobs-leadership"

    def __init__(self, elector: LeaderElector | None) -> None:
        self.elector = elector

    def leading(self) -> bool:
        return self.elector is None or self.elector.leading

    async def start(self) -> None:
        if self.elector is not None:
            self.elector.start()

    async def stop(self) -> None:
        if self.elector is not None:
            await asyncio.to_thread(self.elector.stop)  # hands the Lease over


def add(
    config: Config, process: Process, *, api: kubernetes.client.ApiClient | None = None
) -> Callable[[], bool]:
    """Leadership added to `process`; what tells whether this replica leads now."""
    elector = None
    if config.jobs.lease:
        namespace, name = config.jobs.lease.split("/")
        settings = LeaseSettings(
            namespace=namespace,
            name=name,
            identity=config.jobs.identity or socket.gethostname(),
            lease_duration=config.jobs.lease_duration_seconds,
            setting="jobs.lease",
        )
        elector = LeaderElector(
            api or clients.connect(config.kube),
            settings,
            on_started=lambda: None,
            on_stopped=lambda: None,
        )
        process.health.add_readiness("leader_election", elector.check)
    leadership = JobsLeadership(elector)
    process.add_part(leadership)
    process.metrics.gauge(*LEADER_GAUGE).set_function(lambda: float(leadership.leading()))
    return leadership.leading


def add_leader_loop(
    process: Process,
    *,
    name: str,
    interval_seconds: float,
    run: Callable[[], None],
    leading: Callable[[], bool],
    run_at_start: bool = True,
) -> None:
    """A periodic job of `process` that runs only while `leading()` (the jobs' Lease)."""
    process.add_loop(
        Loop(
            name=name,
            interval_seconds=interval_seconds,
            run=run,
            run_at_start=run_at_start,
            when=leading,
        )
    )
