"""`lens node-agent`, `lens netflow`, `lens jobs`, `lens controller`, `lens api`: each launches
one role; `lens up` launches every role this host can run, in one process.

Flags override their config keys; the role itself is imported only when its command runs.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated

import typer

from lens.cli.common import (
    PORT_FLAGS,
    ConfigOption,
    HostRootOption,
    fail,
    launch,
    load,
    with_host_root,
)
from lens.runtime import errors

if TYPE_CHECKING:
    from lens.runtime.config import Config

controller_app = typer.Typer(
    help="Run the controller (no subcommand), or undo what it did to the cluster.",
    invoke_without_command=True,
)

PortOption = Annotated[
    int | None,
    typer.Option(help="Port of /metrics and health (overrides server.port).", min=0, max=65535),
]


DashboardPortOption = Annotated[
    int | None,
    typer.Option(help="Port of the dashboard and REST API (overrides api.port).", min=0, max=65535),
]
# The settings --port and --api-port override, for the line naming a port in use.
DASHBOARD_FLAGS = {**PORT_FLAGS, "api.port": "--api-port"}


def with_ports(cfg: Config, port: int | None, api_port: int | None = None) -> Config:
    """The config with --port (server.port) and --api-port (api.port) applied."""
    if port is not None:
        cfg = dataclasses.replace(cfg, server=dataclasses.replace(cfg.server, port=port))
    if api_port is not None:
        cfg = dataclasses.replace(cfg, api=dataclasses.replace(cfg.api, port=api_port))
    return cfg


def node_agent(
    config: ConfigOption = None,
    host_root: HostRootOption = None,
    port: Annotated[
        int | None,
        typer.Option(
            help="Port of /metrics and the REST API (overrides server.port).", min=0, max=65535
        ),
    ] = None,
) -> None:
    """Run the per-node agent: GPU, DRI, RDMA and kubelet collectors, /metrics and REST."""
    from lens.roles.node_agent import main as node_agent_main

    cfg = with_host_root(with_ports(load(config), port), host_root)
    launch(cfg, node_agent_main.ROLE)


def netflow(
    config: ConfigOption = None,
    host_root: HostRootOption = None,
    port: PortOption = None,
) -> None:
    """Run the TCP flow exporter: bytes, RTT and connections per peer from eBPF tracepoints."""
    from lens.roles.netflow import main as netflow_main

    launch(with_host_root(with_ports(load(config), port), host_root), netflow_main.ROLE)


def jobs(
    config: ConfigOption = None,
    port: PortOption = None,
    grpc_port: Annotated[
        int | None,
        typer.Option(help="Port of the event server (overrides jobs.grpc_port).", min=0, max=65535),
    ] = None,
) -> None:
    """Run the jobs role: the gRPC container event server writing to the database."""
    from lens.roles.jobs import main as jobs_main

    cfg = with_ports(load(config), port)
    if grpc_port is not None:
        cfg = dataclasses.replace(cfg, jobs=dataclasses.replace(cfg.jobs, grpc_port=grpc_port))
    launch(cfg, jobs_main.ROLE, flags={**PORT_FLAGS, "jobs.grpc_port": "--grpc-port"})


def api(
    config: ConfigOption = None,
    port: PortOption = None,
    api_port: Annotated[
        int | None,
        typer.Option(help="Port of the REST API (overrides api.port).", min=0, max=65535),
    ] = None,
    api_host: Annotated[
        str | None, typer.Option(help="Address of the REST API (overrides api.host).")
    ] = None,
) -> None:
    """Run the REST API: /v1 read from the database, /openapi.json and its docs page."""
    from lens.roles.api import main as api_main

    cfg = with_ports(load(config), port, api_port)
    if api_host is not None:
        cfg = dataclasses.replace(cfg, api=dataclasses.replace(cfg.api, host=api_host))
    launch(cfg, api_main.ROLE, flags={**DASHBOARD_FLAGS, "api.host": "--api-host"})


def up(
    config: ConfigOption = None, port: PortOption = None, api_port: DashboardPortOption = None
) -> None:
    """Run everything this host can in one process: node agent, jobs, API and dashboard (and
    the controller when a Kubernetes API is found), on SQLite under the data directory."""
    from lens.roles.up import main as up_main

    planned = up_main.plan(with_ports(load(config), port, api_port))
    for note in planned.notes:
        typer.echo(f"lens up: {note}", err=True)
    launch(planned.config, *planned.roles, flags=DASHBOARD_FLAGS)


@controller_app.callback()
def controller(ctx: typer.Context, config: ConfigOption = None, port: PortOption = None) -> None:
    """Run the controller: GPU pods and their workloads from the Kubernetes API into the store."""
    if ctx.invoked_subcommand is not None:
        return
    from lens.roles.controller import main as controller_main

    launch(with_ports(load(config), port), controller_main.ROLE)


@controller_app.command("release-finalizers")
def release_finalizers(config: ConfigOption = None) -> None:
    """Remove every Lens finalizer from the cluster (the uninstall path; stop the controller
    first, or it adds them back)."""
    from lens.kube.machinery import clients
    from lens.kube.workloads import uninstall

    cfg = load(config)
    try:
        with clients.connect(cfg.kube) as api:
            released = uninstall.release_all(api)
    except errors.ConfigError as exc:
        fail("config error", str(exc), errors.EXIT_CONFIG)
    except (errors.LensError, OSError) as exc:
        fail("release-finalizers", str(exc), errors.EXIT_FATAL)
    for item in released:
        where = f"{item.namespace}/{item.name}" if item.namespace else item.name
        typer.echo(f"released {item.kind} {where}")
    typer.echo(f"{len(released)} finalizer(s) released")
